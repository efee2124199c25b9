"""The labelled search workspace: two weeks of daily notes and a MEMORY.md of one plausible user,
and the queries each fact must answer.

The user: Sam Keller, a freelance web developer who runs a personal site (Hugo, photos), a
client shop for a bakery (Shopify), a side app (Expo), a home server and a fortnightly
newsletter. The notes hold facts, filler and deliberate near-distractors (the editor's syntax
theme next to the site's dark mode, two backup jobs, two deploy targets).

A note is a list of ``(heading, lines)``; a line ``"@id"`` stands for fact ``id``'s text. A fact
may be stated on several days (``days``): every place answers its queries. Each fact has five
queries: ``kw`` (keywords from the note), ``para`` (the same need in other words), ``q`` (a
question), ``ol`` (other language: fr, de, es, zh, ja in turn) and ``typo`` (keywords with
typing mistakes). ``build.py`` writes the files and the labels.
"""

from __future__ import annotations

# id: (text, kw, para, question, other-language, typo)
FACTS: dict[str, tuple[str, str, str, str, str, str]] = {
    "publish": (
        "- Site deploy: `make publish` builds Hugo with --minify and rsyncs public/ to the"
        " Hetzner box; Netlify is only for preview branches.",
        "make publish hugo rsync hetzner",
        "publishing the website",
        "how do I push the personal site live?",
        "comment mettre en ligne le site web",
        "make pubilsh hugo rsnyc",
    ),
    "pictures": (
        "- Photos for the blog go in static/img/YYYY/, resized to 1600 px wide and converted"
        " to WebP with cwebp -q 80 before committing.",
        "static/img WebP cwebp 1600 px",
        "where do pictures go",
        "where should images for blog posts be stored and in what format?",
        "wo werden die Fotos für den Blog abgelegt",
        "statci img webp cwbep",
    ),
    "darkmode": (
        "- Dark mode on the site: CSS variables under prefers-color-scheme, plus a toggle that"
        " stores the choice in localStorage key `theme`.",
        "dark mode prefers-color-scheme localStorage toggle",
        "night theme",
        "how does the website switch to dark colours?",
        "modo oscuro del sitio web",
        "drak mode prefers-colour-sceme",
    ),
    "syntax": (
        "- Editor: switched VS Code syntax theme to Catppuccin Mocha; the font is JetBrains"
        " Mono 14 with ligatures off.",
        "VS Code syntax theme Catppuccin font",
        "which colour scheme does my code editor use",
        "what font and theme do I use when writing code?",
        "编辑器用的是什么主题和字体",
        "catpuccin vscode theem",
    ),
    "bakery_deadline": (
        "- Brotzeit bakery: the new Shopify storefront must go live before 12 December, in time"
        " for the Christmas stollen pre-orders.",
        "Brotzeit Shopify storefront 12 December",
        "when is the bakery shop launch due",
        "what is the deadline for the bakery's online store?",
        "パン屋のオンラインストアの締め切りはいつ",
        "brotziet shopfy storefornt deadline",
    ),
    "bakery_rate": (
        "- Rate with Brotzeit agreed: 85 EUR per hour, invoiced monthly, 14 days payment terms.",
        "Brotzeit hourly rate 85 EUR invoiced monthly",
        "how much am I charging the baker",
        "what did we agree to bill the bakery per hour?",
        "quel est mon tarif horaire pour la boulangerie",
        "brotzeit houlry rate invocied",
    ),
    "bakery_contact": (
        "- Brotzeit contact is Greta Hahn (owner); she answers WhatsApp faster than email and"
        " never before 10:00 because of the early baking shift.",
        "Greta Hahn WhatsApp Brotzeit contact",
        "best way to reach the bakery owner",
        "who do I talk to at the bakery and how?",
        "wie erreiche ich die Inhaberin der Bäckerei am besten",
        "greta hanh whatsap",
    ),
    "backup_server": (
        "- Home server backup: restic to Backblaze B2 every night at 03:30 via systemd timer;"
        " retention 7 daily, 4 weekly, 12 monthly.",
        "restic Backblaze B2 systemd timer retention",
        "how is the home box saved offsite",
        "when does the nightly backup of the server run and where does it go?",
        "copia de seguridad del servidor de casa",
        "resitc backblaze retnetion",
    ),
    "backup_laptop": (
        "- Laptop backup is Time Machine to the Synology share `tm-sam`; it needs the VPN when"
        " I am away from home.",
        "Time Machine Synology tm-sam laptop",
        "how my notebook gets backed up",
        "where does the MacBook back up to?",
        "笔记本电脑的备份保存在哪里",
        "time machien synolgy laptop",
    ),
    "vpn": (
        "- VPN: WireGuard on the router, port 51820/udp; phone and laptop peers are in"
        " ~/infra/wg/peers, the phone one is `pixel8`.",
        "WireGuard 51820 peers router",
        "connecting to my home network from outside",
        "which port does the home VPN listen on?",
        "自宅のVPNのポート番号は",
        "wiregaurd 51820 peeers",
    ),
    "newsletter": (
        "- Newsletter goes out every second Thursday at 08:00 via Buttondown; drafts live in"
        " content/newsletter/ and need a plain-text version.",
        "newsletter Buttondown second Thursday 08:00",
        "how often do I send the mailing to subscribers",
        "on which day does the newsletter get sent?",
        "quand est envoyée la newsletter",
        "newsleter buttondwon thursday",
    ),
    "app_store": (
        "- Pantry app: iOS builds go through EAS Build, submitted with `eas submit -p ios`;"
        " TestFlight group is `friends`.",
        "EAS Build eas submit TestFlight friends",
        "shipping the phone app to testers",
        "how do beta users get the iPhone version of Pantry?",
        "wie kommt die iOS-App zu den Testern",
        "eas sumbit testfligth",
    ),
    "app_db": (
        "- Pantry stores items in expo-sqlite with a `schema_version` table; migrations run at"
        " start-up, never downgrade.",
        "expo-sqlite schema_version migrations Pantry",
        "how the grocery app keeps its data on the device",
        "what database does the Pantry app use locally?",
        "qué base de datos usa la app Pantry",
        "expo-sqlte shema_version",
    ),
    "dns": (
        "- DNS for samkeller.dev is at Cloudflare (proxy off for the Hetzner A record, on for"
        " www); the registrar is INWX.",
        "Cloudflare DNS samkeller.dev INWX registrar",
        "who manages my domain name records",
        "where is the domain registered and who serves its DNS?",
        "我的域名是在哪里注册的",
        "cloudflair dns registar inwx",
    ),
    "tls": (
        "- TLS on the Hetzner box: Caddy gets Let's Encrypt certificates by itself; the"
        " Caddyfile is in /etc/caddy and reload is `systemctl reload caddy`.",
        "Caddy Let's Encrypt Caddyfile reload",
        "renewing the https certificate of the web server",
        "how are certificates handled on the server?",
        "サーバーの証明書はどうやって更新される",
        "cadddy lets encrpyt cadyfile",
    ),
    "taxes": (
        "- Taxes: VAT return (Umsatzsteuer-Voranmeldung) is quarterly via ELSTER, due on the"
        " 10th after the quarter; the accountant is Jonas Weber.",
        "VAT return ELSTER quarterly accountant",
        "when do I file the sales tax paperwork",
        "how often is the VAT declaration due and who helps?",
        "quand dois-je déclarer la TVA",
        "vat retrun elstre quartely",
    ),
    "invoice_tool": (
        "- Invoices are made in Invoice Ninja on the home server, numbered INV-2026-NNN; PDFs"
        " also go to ~/Documents/invoices/2026.",
        "Invoice Ninja INV-2026 numbering PDFs",
        "what do I use for billing clients",
        "which tool creates my invoices and how are they numbered?",
        "mit welchem Programm schreibe ich Rechnungen",
        "invoce ninja numberign",
    ),
    "standup_time": (
        "- Orbit contract: daily stand-up at 09:15 on Google Meet, Fridays async in the"
        " #orbit-standup channel instead.",
        "Orbit stand-up 09:15 Google Meet Fridays async",
        "when is the morning sync with the agency",
        "what time is the daily meeting for the Orbit job?",
        "a qué hora es la reunión diaria de Orbit",
        "orbti standup 09:15 googel meet",
    ),
    "orbit_stack": (
        "- Orbit's dashboard is Next.js 14 with the app router and tRPC; tests with Playwright,"
        " deploys on Vercel from the `main` branch.",
        "Orbit Next.js tRPC Playwright Vercel",
        "what the agency's frontend is built with",
        "which framework does the Orbit dashboard use?",
        "Orbit的仪表盘用什么技术栈",
        "orbit nextjs trcp playwrigth",
    ),
    "orbit_review": (
        "- Orbit rule: every PR needs one approval from Lukas or Mei and a green Chromatic"
        " visual check before merge.",
        "Orbit PR approval Lukas Mei Chromatic",
        "who has to sign off my code changes at the agency",
        "what does a pull request need before it can be merged at Orbit?",
        "Orbitでプルリクエストをマージする条件は",
        "orbit aproval chromatc",
    ),
    "ssh_key": (
        "- SSH: use the ed25519 key from the YubiKey (`~/.ssh/id_ed25519_sk`) for Hetzner and"
        " GitHub; the old RSA key was revoked on 3 November.",
        "SSH ed25519 YubiKey id_ed25519_sk RSA revoked",
        "logging into the servers with the hardware token",
        "which ssh key should I use now?",
        "quelle clé SSH utiliser",
        "yubikye ed2519 shh key",
    ),
    "hugo_version": (
        "- Hugo is pinned to 0.139.0 extended in .tool-versions; 0.140 broke the image"
        " render hook, do not upgrade until it is fixed.",
        "Hugo pinned 0.139.0 extended .tool-versions",
        "which version of the static site generator am I stuck on",
        "why can't I upgrade Hugo right now?",
        "warum darf ich Hugo nicht aktualisieren",
        "hgo pinend 0.139",
    ),
    "analytics": (
        "- Site analytics: self-hosted Plausible at stats.samkeller.dev; no cookies, so no"
        " consent banner needed.",
        "Plausible stats.samkeller.dev no cookies",
        "how I count visitors without tracking them",
        "what do I use for website statistics?",
        "qué uso para las estadísticas de visitas",
        "plausable stats cookeis",
    ),
    "comments": (
        "- Blog comments: decided against Disqus; using webmentions via webmention.io plus a"
        " mailto link.",
        "webmentions webmention.io Disqus comments",
        "letting readers respond to posts",
        "how can people comment on the blog?",
        "博客的评论是怎么做的",
        "webmentoin disqsu",
    ),
    "git_branch": (
        "- Git convention for my own repos: trunk-based on `main`, short feature branches"
        " named `sk/topic`, squash merge, tags vYYYY.MM.DD for releases.",
        "trunk-based main sk/topic squash merge tags",
        "how I name branches and cut releases",
        "what is my branching and tagging convention?",
        "ブランチ名とリリースタグの付け方",
        "trunk-basd squahs merge",
    ),
    "gym": (
        "- Climbing at Boulderwelt Tuesday and Thursday evenings with Anja; keep those slots"
        " free from calls after 18:00.",
        "Boulderwelt climbing Tuesday Thursday Anja",
        "my weekly sport evenings",
        "which evenings do I go bouldering?",
        "quels soirs je vais grimper",
        "boulderwlet climbign",
    ),
    "coffee": (
        "- Espresso: 18 g in, 36 g out, 28 seconds, grinder setting 9 on the Niche for the"
        " Kenyan beans.",
        "espresso 18 g 36 g Niche setting 9",
        "my coffee recipe",
        "what grind size do I use for the Kenyan beans?",
        "Espresso Rezept Mahlgrad",
        "espreso nihce setting",
    ),
    "meal": (
        "- Allergy note for the team dinner: Mei is vegetarian and Lukas cannot eat nuts;"
        " book the place on Sonnenallee, not the burger bar.",
        "Mei vegetarian Lukas nuts team dinner",
        "food restrictions of my colleagues",
        "what can't Lukas eat?",
        "qué no puede comer Lukas",
        "vegitarian luaks nutts",
    ),
    "monitoring": (
        "- Uptime: Uptime Kuma on the home server pings the site and Invoice Ninja every 60 s"
        " and alerts to the Telegram bot @samk_alerts.",
        "Uptime Kuma Telegram alerts 60 s",
        "how I hear about the site being down",
        "where do outage alerts go?",
        "网站宕机时怎么通知我",
        "uptiem kuma telgram",
    ),
    "disk": (
        "- The home server's data disk is a 4 TB WD Red in a ZFS mirror with the second one;"
        " scrub runs on the first Sunday of the month.",
        "ZFS mirror WD Red scrub 4 TB",
        "how the storage in the basement machine is set up",
        "when does the ZFS scrub run?",
        "ZFSのスクラブはいつ実行される",
        "zsf mirorr scrubb",
    ),
    "password": (
        "- Passwords are in 1Password, vault `Work` for clients; the bakery's Shopify staff"
        " login is shared through a 1Password share link, never by chat.",
        "1Password vault Work share link Shopify",
        "how I hand over logins to clients",
        "where are client passwords kept?",
        "où sont rangés les mots de passe des clients",
        "1pasword vualt",
    ),
    "font_site": (
        "- Site typography: Inter for text, self-hosted as woff2 subset; headings use"
        " Fraunces at weight 600.",
        "Inter Fraunces woff2 typography",
        "what typeface the blog uses",
        "which fonts does the website load?",
        "welche Schriftarten nutzt die Webseite",
        "fraunce woff2 intre",
    ),
    "rss": (
        "- RSS: full-content feed at /index.xml, limited to the last 20 posts; the newsletter"
        " signup links to it.",
        "RSS full-content feed index.xml 20 posts",
        "subscribing to the blog in a feed reader",
        "how many posts does the feed include?",
        "cuántas entradas incluye el feed RSS",
        "rrs feeed index.xlm",
    ),
    "cms": (
        "- Bakery content editing: Greta edits products in the Shopify admin only; the pages"
        " (about, opening hours) are in the theme's JSON templates, I change those.",
        "Shopify admin JSON templates opening hours",
        "who updates the bakery's product listings",
        "can Greta change the opening hours herself?",
        "谁负责更新面包店网站的营业时间",
        "shopfiy admn templtes",
    ),
    "payment": (
        "- Bakery checkout: Shopify Payments with PayPal as second option; Klarna was rejected"
        " because of the fees.",
        "Shopify Payments PayPal Klarna rejected",
        "how customers pay in the bakery shop",
        "why don't we offer Klarna?",
        "パン屋のショップでの支払い方法",
        "paypall klarnna fees",
    ),
    "shipping": (
        "- Bakery delivery: local pick-up only plus bike courier inside the Ringbahn; no"
        " parcel shipping for fresh bread.",
        "pick-up bike courier Ringbahn no shipping",
        "can the bakery send bread by post",
        "how do customers get their orders?",
        "comment les clients récupèrent leurs commandes de pain",
        "bike couirer ringbhan",
    ),
    "car": (
        "- Car: the Golf's TÜV inspection is due in March 2027; the winter tyres went on at"
        " the Kreuzberg garage on 9 November.",
        "Golf TÜV March 2027 winter tyres",
        "when the car needs its inspection",
        "when is the Golf due for TÜV?",
        "wann muss der Golf zum TÜV",
        "winter tyers golf tvü",
    ),
    "rent": (
        "- Flat: rent is 1,180 EUR warm, paid on the 1st by standing order; landlord contact"
        " is Frau Yilmaz from the Hausverwaltung.",
        "rent 1,180 EUR standing order Yilmaz",
        "what the apartment costs me each month",
        "how much is the rent and who is the landlord?",
        "cuánto pago de alquiler",
        "rnet standign order yilmaz",
    ),
    "python_env": (
        "- Python projects use uv with a pinned .python-version (3.12) and ruff; no more"
        " pyenv or poetry.",
        "uv .python-version ruff pyenv poetry",
        "how I set up Python tooling now",
        "which tool manages Python environments in my projects?",
        "我现在用什么管理Python环境",
        "pyhton uv rufff",
    ),
    "node_version": (
        "- Node is 22 LTS everywhere via fnm; the Pantry app needs Node 20 because Expo SDK 51"
        " breaks on 22.",
        "Node 22 LTS fnm Expo SDK 51 Node 20",
        "why the phone project runs an older JavaScript runtime",
        "which Node version does the Pantry app need?",
        "PantryアプリにはどのNodeのバージョンが必要",
        "nodde 22 fnmm expo",
    ),
    "office_hours": (
        "- Working hours: client calls only Monday to Thursday 10:00-16:00; Friday is for"
        " the newsletter and my own projects.",
        "client calls Monday Thursday 10:00-16:00 Friday",
        "when people can book meetings with me",
        "on which days do I take client calls?",
        "quand est-ce que je prends des appels clients",
        "clinet calss monady",
    ),
    "domain_mail": (
        "- Email for samkeller.dev runs on Fastmail with a catch-all; SPF, DKIM and DMARC"
        " (p=quarantine) are set at Cloudflare.",
        "Fastmail catch-all SPF DKIM DMARC",
        "who hosts my mailbox",
        "which provider handles email for my domain?",
        "wer hostet meine E-Mails",
        "fastmial dkmi dmrac",
    ),
    "kanban": (
        "- Tasks live in Linear (team SAM); anything for a client gets the client label,"
        " and the weekly review is Friday 09:00.",
        "Linear team SAM client label weekly review",
        "where I keep my to-do list",
        "which tool tracks my tasks?",
        "dónde gestiono mis tareas",
        "linaer weekyl review",
    ),
    "image_cdn": (
        "- The bakery's product photos are served by Shopify's CDN; upload them at 2048 px"
        " square, Shopify makes the smaller sizes.",
        "bakery product photos Shopify CDN 2048 px square",
        "size of the pictures for the bread shop",
        "what resolution should the bakery product images have?",
        "面包店商品图片应该多大",
        "shopfy cnd 2048 sqaure",
    ),
    "cron_newsletter": (
        "- Newsletter archive page is rebuilt by a GitHub Action on a cron at 09:00 on send"
        " days, pulling issues from the Buttondown API.",
        "GitHub Action cron Buttondown API archive",
        "how the list of past mailings on my site stays current",
        "what updates the newsletter archive page?",
        "ニュースレターのアーカイブページは何で更新される",
        "buttondwon api archvie",
    ),
    "phone_plan": (
        "- Phone: switched to Fraenk, 20 GB for 10 EUR a month; the old Telekom contract ends"
        " on 31 January.",
        "Fraenk 20 GB Telekom contract ends",
        "my mobile data deal",
        "when does the old phone contract end?",
        "quand se termine mon ancien forfait téléphonique",
        "fraenk telkeom contarct",
    ),
    "health_insurance": (
        "- Health insurance is TK; the freelancer contribution is recalculated every"
        " year from the tax assessment, send it to them by 30 June.",
        "TK health insurance contribution tax assessment",
        "paperwork for my medical cover",
        "what do I need to send the health insurer each year?",
        "was muss ich der Krankenkasse schicken",
        "helth insurace asessment",
    ),
    "print_shop": (
        "- Bakery flyers are printed at WIRmachenDRUCK, A6, 350 g matte; files as PDF/X-3"
        " with 2 mm bleed.",
        "flyers WIRmachenDRUCK A6 PDF/X-3 bleed",
        "getting leaflets made for the baker",
        "what format do the bakery flyers need for printing?",
        "formato de los folletos de la panadería",
        "flyres bleeed pdf/x3",
    ),
    "accessibility": (
        "- Accessibility rule for every site I ship: axe check in CI with zero violations and"
        " a contrast ratio of at least 4.5:1 for body text.",
        "axe CI zero violations contrast 4.5:1",
        "making sure people with poor eyesight can use my pages",
        "what contrast ratio must body text have?",
        "正文的对比度至少要多少",
        "acessibility contrats axe",
    ),
    "router": (
        "- Router is a FRITZ!Box 7590; the admin password is in 1Password under `fritz`, and"
        " the home server has the fixed address 192.168.178.20.",
        "FRITZ!Box 7590 192.168.178.20 fixed address",
        "what IP the basement machine has",
        "what is the home server's local address?",
        "自宅サーバーのローカルIPアドレスは",
        "fritzbox 7950 fixd adress",
    ),
}

# Facts stated again on later days (the same fact in other words), for the backfill figures.
REPEATS: dict[str, list[str]] = {
    "publish": [
        "- Reminder to self: publishing is `make publish` (Hugo --minify + rsync to Hetzner),"
        " not the Netlify button.",
    ],
    "pictures": [
        "- Again: blog photos into static/img/2026/ as WebP (cwebp -q 80, 1600 px wide).",
    ],
    "standup_time": [
        "- Orbit stand-up is 09:15 on Meet; Friday is async in #orbit-standup.",
    ],
    "hugo_version": [
        "- Still pinned to Hugo 0.139.0 extended: the 0.140 image render hook bug is open.",
    ],
    "bakery_deadline": [
        "- Brotzeit storefront launch must be before 12 December (stollen pre-orders).",
    ],
}

# Lines that are not answers: filler and near-distractors.
_F = "filler"

# Two weeks of notes: date -> [(heading, lines)]; "@id" is a fact, "@id+" its repeat.
NOTES: dict[str, list[tuple[str, list[str]]]] = {
    "2026-11-02": [
        (
            "Morning",
            [
                "- Back from the weekend in Leipzig; inbox at 43 mails.",
                "@publish",
                "- Wrote the draft for the post about static sites and caching headers.",
            ],
        ),
        (
            "Brotzeit",
            [
                "- Kick-off call with the bakery went well, they want a Christmas launch.",
                "@bakery_deadline",
                "@bakery_rate",
            ],
        ),
        ("Evening", ["@gym", "- Finished the second season of the Danish crime show."]),
    ],
    "2026-11-03": [
        (
            "Infra",
            [
                "@ssh_key",
                "- Cleaned old snapshots on the Hetzner box, 11 GB freed.",
                "@tls",
            ],
        ),
        (
            "Orbit",
            [
                "- Started the Orbit contract today, onboarding docs are thin.",
                "@standup_time",
                "@orbit_stack",
            ],
        ),
    ],
    "2026-11-04": [
        (
            "Site",
            [
                "@pictures",
                "- The gallery page loads 3.1 MB on mobile; needs lazy loading.",
                "@syntax",
            ],
        ),
        ("Brotzeit", ["@bakery_contact", "- Greta sent the logo as a JPEG, asked for an SVG."]),
        ("Admin", ["@invoice_tool"]),
    ],
    "2026-11-05": [
        (
            "Home server",
            [
                "@backup_server",
                "- The fan in the basement box is loud again, ordered a Noctua.",
                "@disk",
            ],
        ),
        ("Orbit", ["@orbit_review", "- Lukas showed the design tokens setup, nice work."]),
        ("Personal", ["@coffee"]),
    ],
    "2026-11-06": [
        (
            "Newsletter",
            [
                "@newsletter",
                "- Issue 31 topic: how I moved from WordPress to Hugo five years ago.",
                "@cron_newsletter",
            ],
        ),
        ("Site", ["@darkmode", "- Someone on Mastodon asked for a print stylesheet."]),
        ("Friday", ["@office_hours"]),
    ],
    "2026-11-07": [
        (
            "Weekend",
            [
                "- Farmers market on Maybachufer, bought too many apples.",
                "@meal",
                "@car",
            ],
        ),
    ],
    "2026-11-09": [
        (
            "Pantry app",
            [
                "@app_store",
                "- Crash on Android 12 when the camera permission is denied; repro found.",
                "@app_db",
                "@node_version",
            ],
        ),
        ("Site", ["@publish+", "@hugo_version"]),
        ("Admin", ["@taxes"]),
    ],
    "2026-11-10": [
        (
            "Infra",
            [
                "@dns",
                "@domain_mail",
                "- Moved the Plausible container to the new Docker network.",
            ],
        ),
        ("Brotzeit", ["@cms", "@payment", "- Greta wants a gift card product, too."]),
        ("Orbit", ["@standup_time+", "- Mei is out next week, Lukas covers reviews."]),
    ],
    "2026-11-11": [
        (
            "Site",
            [
                "@analytics",
                "@comments",
                "@rss",
                "- The syntax highlighting of shell snippets looks washed out in the light theme.",
            ],
        ),
        ("Home", ["@vpn", "@router"]),
    ],
    "2026-11-12": [
        (
            "Brotzeit",
            [
                "@shipping",
                "@image_cdn",
                "@print_shop",
                "- Theme choice: Dawn, with the bakery's colours (flour white, crust brown).",
            ],
        ),
        ("Tooling", ["@python_env", "@git_branch"]),
        ("Personal", ["@phone_plan"]),
    ],
    "2026-11-13": [
        (
            "Site",
            [
                "@font_site",
                "@pictures+",
                "- Lighthouse on the home page: 98 performance, 100 accessibility.",
            ],
        ),
        ("Admin", ["@health_insurance", "@rent"]),
        ("Laptop", ["@backup_laptop", "- macOS 15.2 update broke the external monitor's HDR."]),
    ],
    "2026-11-14": [
        (
            "Weekly review",
            [
                "@kanban",
                "- Billed 31 hours to Orbit and 12 to Brotzeit this week.",
                "@hugo_version+",
                "@accessibility",
            ],
        ),
    ],
    "2026-11-16": [
        (
            "Brotzeit",
            [
                "@bakery_deadline+",
                "@password",
                "- Stollen product pages drafted; photos come Thursday.",
            ],
        ),
        (
            "Home server",
            ["@monitoring", "- Upgraded Invoice Ninja to 5.10, the PDF footer moved."],
        ),
    ],
}

MEMORY_MD = [
    "# Long-Term Memory",
    "",
    "## About me",
    "",
    "- Sam Keller, freelance web developer in Berlin (Neukölln); German and English, some French.",
    "- Clients this winter: Brotzeit bakery (Shopify shop) and the Orbit agency (contract"
    " until February).",
    "- Side projects: samkeller.dev (Hugo blog with photos), the Pantry grocery app (Expo),"
    " the newsletter.",
    "",
    "## Preferences",
    "",
    "- Prefers short written updates over calls; answers within a working day.",
    "- Likes boring technology: static files, SQLite, one server.",
    "- Writes British English on the blog.",
    "",
    "## Infra",
    "",
    "- The blog runs on a Hetzner CX22 in Falkenstein; the home server is an old ThinkCentre.",
    "- Everything infra-related is written down in ~/infra/README.md.",
]

# Broad one-word queries: they brush many notes and single out none. Only the calibration fit
# uses them (bench/fit_search.py, as hits that do not answer), so that a broad query never
# scores like a targeted one.
BROAD = [
    "site",
    "bakery",
    "server",
    "Orbit",
    "Brotzeit",
    "backup",
    "home",
    "Greta",
    "blog",
    "photos",
    "client",
    "Lukas",
    "Friday",
    "theme",
    "app",
    "Hetzner",
    "Shopify",
    "Pantry",
    "1Password",
    "weekly",
]
