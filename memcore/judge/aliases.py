"""Aliases and abbreviations: one canonical token for every way a memory names one thing.

"k8s", "kube" and "Kubernetes" all become ``kubernetes``; "PR", "pull request" and "pull
requests" become ``pull_request``. The built-in table holds the common ones of a coding
agent's memory; :meth:`AliasTable.learn` adds the ones the memory defines itself, written as
"TF (Terraform)" or "Terraform (TF)". Matching runs on lower-cased word tokens, longest phrase
first, so "ci/cd" (tokens ``ci``, ``cd``) and "continuous integration and delivery" both yield
``continuous_integration continuous_delivery``.

Also here, because they are word tables of the same kind: a few synonyms that paraphrases of
one fact use interchangeably (``expire``/``evict``), the number words of en/fr/de/es, and the
units in those languages (and zh/ja), all mapped to one canonical form.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


def words(s: str) -> list[str]:
    """The whitespace-separated words of a word-list literal."""
    return s.split()


def wordset(s: str) -> frozenset[str]:
    """The words of a word-list literal, as a set."""
    return frozenset(s.split())


# surface phrase (space-separated lower-case tokens) -> canonical token(s)
BUILTIN: dict[str, str] = {
    "k8s": "kubernetes",
    "kube": "kubernetes",
    "kubernetes": "kubernetes",
    "tf": "terraform",
    "terraform": "terraform",
    "sre": "site_reliability",
    "sres": "site_reliability",
    "site reliability": "site_reliability",
    "site reliability engineering": "site_reliability",
    "site reliability engineer": "site_reliability",
    "pg": "postgres",
    "tz": "timezone",
    "time zone": "timezone",
    "timezone": "timezone",
    "hil": "hardware_in_the_loop",
    "hardware in the loop": "hardware_in_the_loop",
    "ota": "over_the_air",
    "over the air": "over_the_air",
    "nvs": "non_volatile_storage",
    "non volatile storage": "non_volatile_storage",
    "mle": "machine_learning_engineer",
    "mles": "machine_learning_engineer",
    "machine learning engineer": "machine_learning_engineer",
    "machine learning engineers": "machine_learning_engineer",
    "ml engineer": "machine_learning_engineer",
    "ml engineers": "machine_learning_engineer",
    "postgres": "postgres",
    "postgresql": "postgres",
    "psql": "postgres",
    "js": "javascript",
    "javascript": "javascript",
    "ts": "typescript",
    "typescript": "typescript",
    "ci": "continuous_integration",
    "continuous integration": "continuous_integration",
    "cd": "continuous_delivery",
    "continuous delivery": "continuous_delivery",
    "continuous deployment": "continuous_delivery",
    "continuous integration and delivery": "continuous_integration continuous_delivery",
    "continuous integration and deployment": "continuous_integration continuous_delivery",
    "gh": "github",
    "github": "github",
    "gh actions": "github_actions",
    "github actions": "github_actions",
    "gha": "github_actions",
    "repo": "repository",
    "repos": "repository",
    "repository": "repository",
    "repositories": "repository",
    "repositorio": "repository",
    "dépôt": "repository",
    "env": "environment",
    "envs": "environment",
    "environment": "environment",
    "environments": "environment",
    "env var": "environment_variable",
    "env vars": "environment_variable",
    "environment variable": "environment_variable",
    "environment variables": "environment_variable",
    "prod": "production",
    "production": "production",
    "stg": "staging",
    "staging": "staging",
    "dev": "development",
    "development": "development",
    "auth": "authentication",
    "authn": "authentication",
    "authentication": "authentication",
    "authz": "authorization",
    "authorization": "authorization",
    "db": "database",
    "dbs": "database",
    "database": "database",
    "databases": "database",
    "datenbank": "database",
    "base de données": "database",
    "base de datos": "database",
    "dns": "domain_name_system",
    "domain name system": "domain_name_system",
    "pr": "pull_request",
    "prs": "pull_request",
    "pull request": "pull_request",
    "pull requests": "pull_request",
    "mr": "merge_request",
    "mrs": "merge_request",
    "merge request": "merge_request",
    "jwt": "json_web_token",
    "jwts": "json_web_token",
    "json web token": "json_web_token",
    "json web tokens": "json_web_token",
    "oidc": "openid_connect",
    "openid connect": "openid_connect",
    "iac": "infrastructure_as_code",
    "lfs": "large_file_storage",
    "large file storage": "large_file_storage",
    "infrastructure as code": "infrastructure_as_code",
    "tsdb": "time_series_database",
    "time series database": "time_series_database",
    "ooo": "out_of_office",
    "out of office": "out_of_office",
    "ui": "user_interface",
    "user interface": "user_interface",
    "ux": "user_experience",
    "user experience": "user_experience",
    "vm": "virtual_machine",
    "vms": "virtual_machine",
    "virtual machine": "virtual_machine",
    "lb": "load_balancer",
    "load balancer": "load_balancer",
    "gke": "google_kubernetes_engine",
    "google kubernetes engine": "google_kubernetes_engine",
    "eks": "elastic_kubernetes_service",
    "spm": "swift_package_manager",
    "swift package manager": "swift_package_manager",
    "2fa": "two_factor",
    "mfa": "two_factor",
    "two factor": "two_factor",
    "two factor authentication": "two_factor",
    "multi factor authentication": "two_factor",
    "sso": "single_sign_on",
    "single sign on": "single_sign_on",
    "e2e": "end_to_end",
    "end to end": "end_to_end",
    "i18n": "internationalization",
    "internationalisation": "internationalization",
    "a11y": "accessibility",
    "docs": "documentation",
    "doc": "documentation",
    "documentation": "documentation",
    "config": "configuration",
    "configs": "configuration",
    "configuration": "configuration",
    "deps": "dependency",
    "dependency": "dependency",
    "dependencies": "dependency",
    "msg": "message",
    "msgs": "message",
    "cdn": "content_delivery_network",
    "content delivery network": "content_delivery_network",
    "os": "operating_system",
    "operating system": "operating_system",
    "ml": "machine_learning",
    "machine learning": "machine_learning",
    "infra": "infra",
    "perf": "performance",
    "qa": "quality_assurance",
    "quality assurance": "quality_assurance",
    "api": "api",
    "apis": "api",
    "cli": "cli",
    "command line": "cli",
    "sdk": "sdk",
    "aws": "aws",
    "amazon web services": "aws",
    "gcp": "gcp",
    "google cloud": "gcp",
    "nextjs": "next.js",
    "node.js": "node",
    "nodejs": "node",
    "py": "python",
    "golang": "go",
    "mac": "macos",
    "osx": "macos",
    "os x": "macos",
    "rn": "react_native",
    "max": "maximum",
    "maximum": "maximum",
    "min": "minimum",
    "minimum": "minimum",
    "react native": "react_native",
}

# words that paraphrases of one fact swap freely (canonical first)
SYNONYMS: tuple[tuple[str, ...], ...] = (
    ("expire", "evict", "expiry", "ttl"),
    ("restart", "reboot", "relaunch"),
    ("store", "keep", "kept", "retain", "save", "persist", "hold", "held", "stash"),
    ("use", "used", "uses", "using", "utilize", "utilise", "employ", "rely"),
    ("write", "wrote", "written", "author", "authored"),
    ("choose", "chose", "chosen", "pick", "picked", "select"),
    ("go", "goes", "went", "gone"),
    ("need", "require", "depend", "must", "necessary", "mandatory"),
    ("allow", "permit", "let", "enable"),
    ("create", "generate", "produce", "make", "made", "build", "built", "render"),
    ("start", "begin", "launch", "kick"),
    ("delete", "remove", "erase", "purge"),
    ("reject", "drop", "discard", "refuse"),
    ("own", "handle", "responsible", "responsibility", "charge", "zuständig", "responsable"),
    ("send", "sent", "route", "deliver", "forward", "ship", "push"),
    ("run", "ran", "running", "execute", "operate"),
    ("show", "display", "present"),
    ("fast", "quick"),
    ("big", "large"),
    ("small", "little", "tiny"),
    ("laptop", "machine", "computer", "box"),
    ("person", "people", "engineer", "member"),
    ("ask", "consult"),
    ("contract", "agreement"),
    ("licence", "license", "licensing"),
    ("organisation", "organization", "org"),
    ("colour", "color"),
    ("behaviour", "behavior"),
    ("deploy", "deployment", "release", "rollout"),
    ("reach", "contact", "ping", "message"),
    ("listen", "serve", "bind"),
    ("setting", "option", "flag", "configuration"),
    ("fully", "completely", "entirely"),
    ("image", "picture", "photo"),
)

# number words (en, fr, de, es); articles ("un", "ein", "uno") are left out on purpose
NUMBER_WORDS: dict[str, int] = {
    **{
        w: i
        for i, w in enumerate(
            words(
                "zero one two three four five six seven eight nine ten eleven twelve thirteen "
                "fourteen fifteen sixteen seventeen eighteen nineteen twenty"
            )
        )
    },
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "dozen": 12,
    "twice": 2,
    "deux": 2,
    "trois": 3,
    "quatre": 4,
    "cinq": 5,
    "sept": 7,
    "huit": 8,
    "neuf": 9,
    "dix": 10,
    "douze": 12,
    "quinze": 15,
    "vingt": 20,
    "trente": 30,
    "zwei": 2,
    "drei": 3,
    "vier": 4,
    "fünf": 5,
    "sechs": 6,
    "sieben": 7,
    "acht": 8,
    "neun": 9,
    "zehn": 10,
    "zwölf": 12,
    "zwanzig": 20,
    "dreißig": 30,
    "dos": 2,
    "tres": 3,
    "cuatro": 4,
    "cinco": 5,
    "seis": 6,
    "siete": 7,
    "ocho": 8,
    "nueve": 9,
    "diez": 10,
    "doce": 12,
    "quince": 15,
    "veinte": 20,
    "treinta": 30,
}
# "six" is also French; "one" only counts before a noun (see analysis)
ONES = {"one"}

# unit word -> canonical unit
UNITS: dict[str, str] = {}
for _canon, _words in {
    "ms": "ms msec millisecond milliseconds milisegundos millisekunden millisecondes",
    "s": "s sec secs second seconds seconde secondes sekunde sekunden segundo segundos 秒",
    "min": "m min mins minute minutes minuten minuto minutos 分 分钟 分間",
    "h": "h hr hrs hour hours heure heures stunde stunden hora horas 小时 時間",
    "day": "d day days jour jours tag tage tagen día días dia dias 天 日",
    "week": "wk week weeks semaine semaines woche wochen semana semanas 周 週間 週",
    "month": "mo month months mois monat monate monaten mes meses 个月 ヶ月 か月",
    "year": "y yr yrs year years an ans année années jahr jahre jahren año años 年",
    "kb": "kb kib k",
    "mb": "mb mib mi",
    "gb": "gb gib gi g",
    "tb": "tb tib ti",
    "%": "% percent pct pourcent prozent por ciento",
    "px": "px pixel pixels",
    "pt": "pt",
    "°c": "°c",
    "x": "x times fois mal veces 次 回",
    "char": "char chars character characters caractère caractères zeichen caracteres "
    "文字 字符 个字符",
}.items():
    for _w in _words.split():
        UNITS.setdefault(_w, _canon)

_ACRONYM_RE = re.compile(r"^[A-Z][A-Za-z0-9]{1,7}$")
_DEF_RE = re.compile(r"([A-Za-z][\w.+-]*(?:[ -][A-Za-z][\w.+-]*){0,4})\s*\(\s*([^()]{1,60}?)\s*\)")
_WORD_RE = re.compile(r"[\w.+-]+")


def _initials_match(acronym: str, phrase: str) -> bool:
    """``acronym`` abbreviates ``phrase``: its letters appear in order, the first one first
    ("TF" / "Terraform", "SRE" / "site reliability engineering")."""
    a = [c for c in acronym.lower() if c.isalnum()]
    p = phrase.lower()
    if not a or not p or p[0] != a[0]:
        return False
    words = p.split()
    if len(words) >= len(a) and all(w[:1] == c for w, c in zip(words, a, strict=False)):
        return True
    pos = 0
    for c in a:
        pos = p.find(c, pos)
        if pos < 0:
            return False
        pos += 1
    return True


@dataclass
class AliasTable:
    """Phrase -> canonical token table: the built-in one plus what the memory defines."""

    phrases: dict[tuple[str, ...], tuple[str, ...]] = field(default_factory=dict)
    longest: int = 1

    @classmethod
    def builtin(cls) -> AliasTable:
        t = cls()
        for surface, canon in BUILTIN.items():
            t.add(surface, canon)
        return t

    def add(self, surface: str, canon: str) -> None:
        key = tuple(surface.lower().replace("-", " ").split())
        if not key:
            return
        self.phrases[key] = tuple(canon.split())
        self.longest = max(self.longest, len(key))

    def learn(self, texts: Iterable[str]) -> list[tuple[str, str]]:
        """Add the aliases the texts define ("TF (Terraform)", "Terraform (TF)"); returns the
        (short, long) pairs learned. A built-in canonical form wins over a learned one."""
        found: list[tuple[str, str]] = []
        for text in texts:
            if "(" not in text:
                continue  # every definition has a parenthesis (and the search is costly)
            for m in _DEF_RE.finditer(text):
                before, inside = m.group(1).strip(), m.group(2).strip()
                for short, long_ in ((before.split()[-1], inside), (inside, before)):
                    if not _ACRONYM_RE.match(short) or " " in short:
                        continue
                    # the long form: the last words of the phrase with the same initials
                    words = long_.split()
                    for n in range(1, min(len(words), 5) + 1):
                        cand = " ".join(words[-n:] if long_ is before else words[:n])
                        if cand.lower() != short.lower() and _initials_match(short, cand):
                            found.append((short, cand))
                            break
        for short, long_ in found:
            known = self.phrases.get(tuple(long_.lower().replace("-", " ").split()))
            canon = " ".join(known) if known else "_".join(long_.lower().replace("-", " ").split())
            if tuple(short.lower().split()) not in self.phrases:
                self.add(short, canon)
            if not known:
                self.add(long_, canon)
        return found

    def starts_phrase(self, parts: Sequence[str]) -> bool:
        """``parts`` (two words or more) begin a known phrase ("time series" of "time series
        database")."""
        n = len(parts)
        return n >= 2 and any(len(k) >= n and k[:n] == tuple(parts) for k in self.phrases)

    def resolve(self, tokens: Sequence[str]) -> list[str]:
        """Tokens with every known phrase replaced by its canonical token(s), longest first."""
        out: list[str] = []
        i, n = 0, len(tokens)
        while i < n:
            for span in range(min(self.longest, n - i), 0, -1):
                canon = self.phrases.get(tuple(tokens[i : i + span]))
                if canon is not None:
                    out.extend(canon)
                    i += span
                    break
            else:
                out.append(tokens[i])
                i += 1
        return out
