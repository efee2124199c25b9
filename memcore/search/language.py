"""Which language a short query is written in, as far as the search needs to know.

The search's second model (``memcore.search.companion``) is English only, so it is asked
only about queries that read as English sentences. A query is too short for a statistical
language model, but its function words tell: "where", "my", "the" are English, "wann",
"ich", "die" German, "quel", "le", "est" French. A word like "a", "in", "me" or "was" is a
function word in English and in another language ("Was habe ich dem Nachbarn geschenkt?",
"¿A qué hora...?"), so counting English words alone lets such queries through. Each language
here counts the query's words that are among its most common function words; the query is
English unless another language counts more (a tie is English: "never store money as
floats" has one function word, "as", which French and Portuguese share).

The lists are the most frequent closed-class words of each language (articles, pronouns,
prepositions, conjunctions, common auxiliaries and question words), lower-cased, with
accents. Elided French forms ("l'", "d'", "qu'") are counted as words of their own.
"""

from __future__ import annotations

import functools
import re

_WORD_RE = re.compile(r"\w+")

#: Function words of the Latin-script languages other than English.
_LISTS: dict[str, str] = {
    "fr": (
        "le la les l un une des du de d au aux et ou mais donc car ni que qu qui quoi quel"
        " quelle quels quelles où quand comment pourquoi combien est sont était ai as a avons"
        " avez ont suis es sommes êtes être avoir je j tu il elle on nous vous ils elles me"
        " te se mon ma mes ton ta tes son sa ses notre nos votre vos leur leurs ce cet cette"
        " ces dans sur sous avec sans pour par chez vers entre en y ne pas plus très aussi"
        " ça cela"
    ),
    "de": (
        "der die das den dem des ein eine einen einem einer eines und oder aber denn dass"
        " wer was wann wo wie warum wieso welche welcher welches wohin woher ist sind war"
        " waren bin bist hat habe haben hast hatte wird werden wurde kann können muss soll"
        " will ich du er sie es wir ihr mich mir dich dir uns euch sich mein meine meinen"
        " meinem dein deine sein seine unser unsere in im an am auf aus bei mit nach von vom"
        " zu zum zur für über unter vor bis durch gegen ohne nicht kein keine noch schon"
        " auch also so"
    ),
    "es": (
        "el la los las lo un una unos unas y o pero que qué quien quién quienes cual cuál"
        " cuales cuáles donde dónde cuando cuándo como cómo cuanto cuánto cuánta cuántos"
        " cuántas por porqué es son era fue está están estoy soy he ha han hay tengo tiene"
        " yo tú él ella nosotros vosotros ellos ellas me te se nos mi mis tu tus su sus"
        " nuestro nuestra de del al a en con sin para sobre entre hasta desde no sí muy"
        " también"
    ),
    "it": (
        "il lo la i gli le un uno una di del della dei degli delle da dal dalla in nel nella"
        " con su sul sulla per tra fra e o ma che chi cosa quale quali dove quando come"
        " a perché quanto quanti è sono era ho hai ha abbiamo hanno io tu lui lei noi voi"
        " loro mi ti si ci vi mio mia miei mie tuo tua suo sua non più anche"
    ),
    "pt": (
        "o a os as um uma uns umas de do da dos das em no na nos nas por pelo pela com sem"
        " para e ou mas que quem qual quais onde quando como porque quanto quanta é são era"
        " foi está estão tem têm eu tu ele ela nós vós eles elas me te se meu minha meus"
        " minhas seu sua não sim muito também"
    ),
    "nl": (
        "de het een en of maar dat die wie wat waar wanneer hoe waarom welke is zijn was"
        " waren ben heb hebt heeft hebben had kan kunnen moet wil zal ik jij je hij zij ze"
        " wij we jullie mij me mijn jouw zijn haar ons onze in op aan met van voor naar bij"
        " uit over door om tot niet geen ook nog al"
    ),
}
OTHER_FUNCTION_WORDS: dict[str, frozenset[str]] = {
    lang: frozenset(words.split()) for lang, words in _LISTS.items()
}


@functools.cache
def english_words() -> frozenset[str]:
    """The English function words (the hashing backend's stop words)."""
    from memcore.search.embeddings.hashing import STOP_WORDS

    return frozenset(STOP_WORDS)


def reads_as_english(query: str) -> bool:
    """Whether ``query`` reads as an English sentence: no letters beyond Latin script, at
    least one English function word, and no other language of :data:`OTHER_FUNCTION_WORDS`
    with more function words in it (see the module docstring)."""
    if any(ord(ch) > 0x24F and ch.isalpha() for ch in query):  # beyond Latin Extended-B
        return False
    words = _WORD_RE.findall(query.lower())
    ours = english_words()
    english = sum(1 for w in words if w in ours)
    if english == 0:
        return False
    return all(
        sum(1 for w in words if w in vocab) <= english for vocab in OTHER_FUNCTION_WORDS.values()
    )
