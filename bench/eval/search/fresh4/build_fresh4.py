#!/usr/bin/env python3
"""Hand-written facts and queries for fresh4. Writes fresh4.jsonl next to this file."""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def P(code):
    f, line = code.split(":")
    path = "MEMORY.md" if f == "M" else f"memory/2026-10-{f}.md"
    return {"path": path, "startLine": int(line), "endLine": int(line)}


# fact slug -> answer lines ("M" = MEMORY.md, "05" = memory/2026-10-05.md)
FACTS = {
    "camille-icu-nurse": "M:3",
    "partner-jonas-sound-engineer": "M:4",
    "reply-language-rules": "M:5",
    "parents-messages-in-french": "M:5 08:5",
    "no-appointments-before-14-after-nights": "M:6 02:3",
    "shift-pattern-12h": "M:9",
    "manager-pellerin": "M:10",
    "leave-request-deadline": "M:10 06:7",
    "sophie-closest-colleague": "M:11",
    "shift-swap-whatsapp-group": "M:11",
    "du-douleur-deadline": "M:12",
    "penicillin-allergy": "M:13",
    "u11-training-times": "M:16",
    "u11-squad-size": "M:16 14:4",
    "karim-assistant-role": "M:17",
    "theo-asthma": "M:18 03:5",
    "theo-inhaler-all": "M:18 03:5 10:5",
    "parents-whatsapp-group": "M:19",
    "parents-announcement-thursday": "M:19 08:5",
    "flat-rue-dumenge": "M:22",
    "renovation-budget-total": "M:23 20:8",
    "works-loan-rate": "M:23",
    "plumber-phone": "M:24",
    "electrician-name-company": "M:24",
    "kitchen-metod-voxtorp-oak": "M:25",
    "move-in-date": "M:26",
    "lease-end-notice": "M:26",
    "notion-board": "M:27",
    "mother-birthday": "M:30 26:7",
    "mother-annecy": "M:30",
    "brother-mathieu-call-time": "M:31",
    "jonas-parents-freiburg": "M:32",
    "christmas-in-freiburg": "M:32 05:3 05:4 08:8",
    "lina-architect-plan": "M:33",
    "moustache-dose": "M:36",
    "moustache-vet-clinic": "M:36 06:6",
    "moustache-age": "M:36",
    "moustache-medication-all": "M:36 01:8 06:6 08:3 21:4",
    "no-car-transport": "M:37",
    "cargo-bike-gear": "M:37",
    "running-frequency": "M:38",
    "strava-app": "M:38 02:8 26:6",
    "marseille-cassis-registration": "M:38",
    "german-course-b1": "M:39",
    "lactose-intolerance": "M:40",
    "milk-oat": "M:40 06:10",
    "doctolib-booking": "M:41 05:8",
    "sleep-until-13-oct1": "01:3",
    "floor-plan-v3-bathroom-moves": "01:4",
    "plumbing-quote-6850": "01:5",
    "plumber-start-date": "01:5 19:3",
    "plumbing-quote-all": "01:5 02:4 14:7",
    "plumbing-cost-bathroom": "01:5 14:7",
    "shower-tray-size-colour": "01:6 14:6",
    "shower-tray-ordered": "14:6",
    "karim-away-wedding": "01:7",
    "cover-for-karim-marc": "07:4 10:6",
    "methimazole-one-box-left": "01:8",
    "goethe-homework-konjunktiv": "01:9",
    "edf-bill": "01:10",
    "plumber-deposit": "02:4 07:8",
    "plumber-deposit-reference": "07:8",
    "zellige-shower-choice": "02:5",
    "zellige-quantity": "02:5 23:3",
    "zellige-colour": "02:5 23:7",
    "zellige-price": "02:5",
    "terrazzo-bathroom-floor": "02:6",
    "studio-soundproofing": "02:7 10:8 21:7",
    "studio-room": "02:7 10:7",
    "studio-insulation-order": "21:7",
    "run-12km-quays": "02:8",
    "first-aid-kit-order": "02:9",
    "sophie-dinner-vegetarian": "02:10",
    "match-saint-genis-win": "03:3",
    "keeper-rotation-friendlies": "03:4",
    "theo-spare-inhaler": "03:5",
    "bibs-cost-reimburse": "03:6 28:6",
    "bibs-decathlon": "03:6",
    "bibs-reimbursed": "28:6",
    "club-agm": "03:7",
    "parquet-batons-rompus": "03:8",
    "parquet-area": "03:9",
    "parquet-quote-1920": "05:5",
    "parquet-dates": "05:5 07:7",
    "parquet-morel-all": "03:9 05:5 07:7",
    "christmas-leave-dates": "05:3 14:5",
    "christmas-leave-confirmed": "14:5",
    "leave-confirm-by-20-oct": "05:3",
    "train-freiburg": "05:4",
    "rewiring-nfc15100": "05:6",
    "rewiring-whole-flat": "05:6 06:3",
    "du-topic-supervisor": "05:7",
    "dentist-checkup-27-oct": "05:8 19:8 26:8",
    "dentist-checkup-time": "05:8 26:8",
    "dentist-name": "05:8",
    "opera-premiere-date": "05:9 16:4",
    "jonas-late-at-opera": "05:9",
    "electrician-quote-11400": "06:3",
    "drop-underfloor-heating": "06:4 14:7",
    "drop-underfloor-heating-why": "06:4",
    "zwischentest-date": "06:5 13:4",
    "zwischentest-moved": "13:4",
    "methimazole-pickup": "06:6",
    "leave-reminder-14th": "06:7",
    "leave-reminder-monthly": "06:7 14:8",
    "health-questionnaire-missing": "06:8 12:4",
    "health-questionnaire-all": "06:8 12:4 14:4",
    "all-kids-cleared": "14:4",
    "intervals-tete-dor": "06:9",
    "shopping-list": "06:10",
    "training-oct7-drills": "07:3",
    "half-match-rule": "07:5",
    "load-bearing-wall-doorway": "07:6",
    "sophie-swap-all": "07:9 16:8 21:3 28:4",
    "sophie-swap-i-work-29": "07:9 16:8 28:4",
    "sophie-swap-she-covers-22": "07:9 16:8 21:3",
    "methimazole-cost": "08:3",
    "cat-t4-test": "08:3",
    "electrician-start": "08:4 26:5",
    "electrician-duration": "08:4",
    "vaulx-meeting-point": "08:5",
    "loan-drawdown-15000": "08:6",
    "night-shifts-13-15-oct": "08:7 13:3",
    "ute-stay-bernd-65": "08:8",
    "vaulx-loss": "10:3",
    "maelys-ankle": "10:4 12:3",
    "maelys-two-weeks": "12:3",
    "marc-offers-help": "10:6",
    "studio-dimensions": "10:7",
    "studio-no-foam": "10:8",
    "recovery-jog": "10:9",
    "race-bib-8412": "12:5 23:5",
    "race-shuttle-bus": "12:5",
    "race-plan": "12:6",
    "gineste": "12:6 26:3",
    "zellige-delivery": "12:7 21:3 23:3",
    "zellige-carry-fee": "12:7",
    "skip-rental": "12:8",
    "skip-permit": "12:8 13:5",
    "skip-permit-dates": "13:5",
    "mathieu-february-visit": "12:9",
    "chanques-bps": "13:6",
    "vitamin-d-reminder": "13:7",
    "loop-earplugs": "13:8",
    "karim-training-alone": "14:3",
    "plumbing-total-5550": "14:7",
    "opera-with-sophie": "16:4",
    "floor-plan-v4-cupboard": "16:5",
    "entrance-cupboard": "16:5 26:5",
    "invoices-factures-tab": "16:6",
    "paint-colours": "16:7",
    "works-started-skip-arrived": "19:3",
    "neighbour-dupuis-noise": "19:4",
    "lead-pipes": "19:5",
    "toussaint-no-training": "19:6",
    "long-run-monts-dor": "19:7",
    "no-german-class-27-oct": "20:3",
    "ikea-order": "20:4",
    "foncia-move-out-inspection": "20:5",
    "sophie-birthday-gift": "20:6",
    "race-hotel-train": "20:7",
    "budget-committed": "20:8",
    "moustache-vomiting": "21:4",
    "moustache-sick-and-better": "21:4 23:4",
    "moustache-better": "23:4",
    "du-outline-sent": "21:5",
    "race-taper": "21:6",
    "velov-renewal": "21:8",
    "zellige-chipped": "23:3",
    "race-bag": "23:5",
    "extra-day-shift-5-nov": "23:6",
    "kitchen-splashback": "23:7",
    "cost-split-60-40": "23:8",
    "race-result": "26:3",
    "calves-no-running": "26:4",
    "wifi-box-location": "26:5",
    "strava-weekly-only": "26:6",
    "annecy-weekend": "26:7",
    "cavity-filling": "28:3",
    "plumbing-first-fix-invoice": "28:5",
    "tournament-cancelled-next-match": "28:7",
    "goethe-resumes": "28:8",
    "pocket-door": "28:9",
}

Q = []


def q(kind, lang, fact, text):
    Q.append((kind, lang, fact, text))


# ---- MEMORY.md
q("paraphrase", "en", "camille-icu-nurse", "user's job looking after critically ill patients")
q("question", "en", "camille-icu-nurse", "Which hospital does Camille work at?")
q("other", "zh", "camille-icu-nurse", "用户在哪家医院工作？")
q("other", "fr", "camille-icu-nurse", "quel est le métier de Camille ?")
q("paraphrase", "en", "partner-jonas-sound-engineer", "what does her boyfriend do for a living")
q("question", "en", "partner-jonas-sound-engineer", "What languages do we speak at home?")
q("other", "de", "partner-jonas-sound-engineer", "Was arbeitet Jonas beruflich?")
q("paraphrase", "en", "reply-language-rules", "which tongue should the assistant answer me in")
q("keyword", "en", "reply-language-rules", "reply language English")
q("other", "ja", "reply-language-rules", "買い物リストは何語で書くべき？")
q(
    "question",
    "en",
    "parents-messages-in-french",
    "In what language should messages to the team's parents be written?",
)
q(
    "paraphrase",
    "en",
    "no-appointments-before-14-after-nights",
    "earliest hour I can be booked following an overnight stint at work",
)
q(
    "question",
    "en",
    "no-appointments-before-14-after-nights",
    "Can I schedule a call at 10am the day after a night shift?",
)
q("typo", "en", "no-appointments-before-14-after-nights", "apointments after nigth shift")
q(
    "other",
    "es",
    "no-appointments-before-14-after-nights",
    "¿A partir de qué hora puedo tener citas después de un turno de noche?",
)
q(
    "paraphrase",
    "en",
    "shift-pattern-12h",
    "how long are my working days and how much rest after a block of overnights",
)
q("keyword", "en", "shift-pattern-12h", "shift pattern nights")
q("other", "de", "shift-pattern-12h", "Wie lange dauern meine Nachtschichten?")
q("question", "en", "manager-pellerin", "Who is my line manager at the hospital?")
q("keyword", "en", "manager-pellerin", "cadre de santé manager")
q("paraphrase", "en", "leave-request-deadline", "cut-off for asking for holidays at work")
q("typo", "en", "leave-request-deadline", "leave reqest deadlin")
q("other", "fr", "leave-request-deadline", "avant quelle date faut-il poser ses congés ?")
q(
    "paraphrase",
    "en",
    "sophie-closest-colleague",
    "which coworker am I closest to on the overnight team",
)
q(
    "question",
    "en",
    "shift-swap-whatsapp-group",
    "What is the WhatsApp group for swapping shifts called?",
)
q("keyword", "en", "shift-swap-whatsapp-group", "shift swap WhatsApp group")
q(
    "paraphrase",
    "en",
    "du-douleur-deadline",
    "when must the university thesis on pain relief be handed in",
)
q("question", "en", "du-douleur-deadline", "When is my DU dissertation due?")
q("keyword", "en", "du-douleur-deadline", "dissertation deadline")
q("other", "zh", "du-douleur-deadline", "我的论文截止日期是什么时候？")
q("paraphrase", "en", "penicillin-allergy", "any antibiotic I must never be given")
q("question", "en", "penicillin-allergy", "Am I allergic to any medication?")
q("typo", "en", "penicillin-allergy", "penicilin alergy")
q("other", "ja", "penicillin-allergy", "薬のアレルギーはありますか？")
q("other", "es", "penicillin-allergy", "¿A qué antibiótico es alérgica Camille?")
q("paraphrase", "en", "u11-training-times", "when and where do the kids practise each week")
q("question", "en", "u11-squad-size", "How many children are on the U11 team?")
q("keyword", "en", "u11-training-times", "U11 training Wednesday")
q("other", "fr", "u11-training-times", "à quelle heure est l'entraînement du mercredi ?")
q("other", "de", "u11-training-times", "Wann und wo trainiert die U11-Mannschaft?")
q(
    "paraphrase",
    "en",
    "karim-assistant-role",
    "who handles the team's equipment bag and the official match sheets",
)
q("question", "en", "karim-assistant-role", "Who is the assistant coach?")
q("typo", "en", "karim-assistant-role", "asistant coach karim")
q("other", "es", "karim-assistant-role", "¿Quién rellena las hojas de partido en la app?")
q("paraphrase", "en", "theo-asthma", "which young player has a breathing condition")
q("question", "en", "theo-asthma", "Where should Théo's Ventolin be kept?")
q("keyword", "en", "theo-inhaler-all", "Théo inhaler")
q("other", "zh", "theo-asthma", "守门员的哮喘吸入器应该放在哪里？")
q(
    "paraphrase",
    "en",
    "parents-whatsapp-group",
    "how do I get in touch with the families of the young players",
)
q(
    "question",
    "en",
    "parents-announcement-thursday",
    "What day does the weekly announcement to parents go out?",
)
q("keyword", "en", "parents-whatsapp-group", "U11 Parents WhatsApp")
q("other", "ja", "parents-announcement-thursday", "保護者への週のお知らせは何曜日に送る？")
q(
    "paraphrase",
    "en",
    "flat-rue-dumenge",
    "how big is the apartment we purchased and which storey is it on",
)
q("question", "en", "flat-rue-dumenge", "When did we sign for the flat at the notary?")
q("keyword", "en", "flat-rue-dumenge", "flat size floor lift")
q("typo", "en", "flat-rue-dumenge", "apartmnt notaire signing")
q("other", "de", "flat-rue-dumenge", "Wie groß ist die neue Wohnung?")
q("other", "fr", "flat-rue-dumenge", "est-ce que l'immeuble a un ascenseur ?")
q("paraphrase", "en", "renovation-budget-total", "total money set aside for the building works")
q("keyword", "en", "works-loan-rate", "works loan interest rate")
q("typo", "en", "renovation-budget-total", "renovaton budjet")
q("other", "es", "works-loan-rate", "¿Cuál es el tipo de interés del préstamo para las obras?")
q("question", "en", "plumber-phone", "What's Didier's phone number?")
q(
    "paraphrase",
    "en",
    "electrician-name-company",
    "full name and firm of the person doing our wiring",
)
q("typo", "en", "plumber-phone", "plumbr phone numbr")
q("other", "zh", "plumber-phone", "水管工的电话号码是多少？")
q(
    "paraphrase",
    "en",
    "kitchen-metod-voxtorp-oak",
    "cabinet door style and counter material for the new cooking area",
)
q("question", "en", "kitchen-metod-voxtorp-oak", "What worktop are we getting in the kitchen?")
q("keyword", "en", "kitchen-metod-voxtorp-oak", "Metod Voxtorp")
q("other", "fr", "kitchen-metod-voxtorp-oak", "quel plan de travail pour la nouvelle cuisine ?")
q("question", "en", "move-in-date", "When do we plan to move into the new flat?")
q(
    "paraphrase",
    "en",
    "lease-end-notice",
    "when does the rental agreement on our current place finish",
)
q("other", "de", "move-in-date", "Wann ziehen wir in die neue Wohnung ein?")
q("paraphrase", "en", "notion-board", "where is the to-do list for the building works kept")
q("keyword", "en", "notion-board", "Notion chantier board")
q("typo", "en", "notion-board", "notoin board renovaton")
q("question", "en", "mother-birthday", "When is Mum's birthday?")
q("paraphrase", "en", "mother-annecy", "which town does my mother live in")
q("other", "es", "mother-birthday", "¿Cuándo es el cumpleaños de mi madre?")
q("other", "ja", "mother-annecy", "母はどこに住んでいますか？")
q("paraphrase", "en", "brother-mathieu-call-time", "time difference with my sibling in Canada")
q("question", "en", "brother-mathieu-call-time", "When is the best time to call Mathieu?")
q("keyword", "en", "brother-mathieu-call-time", "call Mathieu time difference")
q("other", "fr", "brother-mathieu-call-time", "quand appeler mon frère au Canada ?")
q("paraphrase", "en", "jonas-parents-freiburg", "where do my in-laws live")
q("question", "en", "christmas-in-freiburg", "Where are we spending Christmas this year?")
q("other", "de", "jonas-parents-freiburg", "Wo wohnen die Eltern von Jonas?")
q(
    "paraphrase",
    "en",
    "lina-architect-plan",
    "which friend designed the layout of the apartment without charging",
)
q("question", "en", "lina-architect-plan", "What does Lina do for work?")
q("other", "zh", "lina-architect-plan", "谁免费画了新公寓的平面图？")
q("paraphrase", "en", "moustache-dose", "how much thyroid medicine does our pet get each day")
q("question", "en", "moustache-vet-clinic", "Which clinic is the cat's vet at?")
q("keyword", "en", "moustache-dose", "Moustache methimazole dose")
q("typo", "en", "moustache-dose", "cat thyriod medicaton dose")
q("other", "fr", "moustache-age", "quel âge a le chat ?")
q("other", "es", "moustache-medication-all", "¿Qué medicamento toma el gato?")
q("paraphrase", "en", "no-car-transport", "how do I get around town without a vehicle")
q("question", "en", "no-car-transport", "Do I own a car?")
q("keyword", "en", "cargo-bike-gear", "cargo bike")
q("other", "de", "cargo-bike-gear", "Womit transportiere ich die Fußballausrüstung?")
q("question", "en", "running-frequency", "How often do I go running?")
q("paraphrase", "en", "strava-app", "which app records my jogs")
q("keyword", "en", "marseille-cassis-registration", "Marseille Cassis registration")
q("paraphrase", "en", "german-course-b1", "which evening is my language class and at what level")
q("question", "en", "german-course-b1", "What level is my German course?")
q("typo", "en", "german-course-b1", "goethe insitute class times")
q("other", "zh", "german-course-b1", "德语课是星期几上？")
q("other", "ja", "german-course-b1", "ドイツ語の授業は何時から？")
q("paraphrase", "en", "lactose-intolerance", "can I have cow's milk products")
q("keyword", "en", "lactose-intolerance", "lactose intolerant")
q("other", "es", "milk-oat", "¿Qué tipo de leche toma?")
q("paraphrase", "en", "doctolib-booking", "which website do I use to reserve medical visits")
q("typo", "en", "doctolib-booking", "doctolib apointment booking")
q("other", "ja", "doctolib-booking", "歯医者の予約はどのサイトで取る？")

# ---- daily notes
q(
    "question",
    "en",
    "sleep-until-13-oct1",
    "Until what time did I ask for no reminders after my last night shift on 1 October?",
)
q(
    "paraphrase",
    "en",
    "floor-plan-v3-bathroom-moves",
    "in the third draft of the layout, where does the washroom end up",
)
q("question", "en", "floor-plan-v3-bathroom-moves", "Why does the soil stack need rerouting?")
q("keyword", "en", "floor-plan-v3-bathroom-moves", "floor plan v3")
q(
    "other",
    "fr",
    "floor-plan-v3-bathroom-moves",
    "pourquoi faut-il dévier la colonne d'évacuation ?",
)
q(
    "paraphrase",
    "en",
    "plumbing-quote-6850",
    "what did the pipe guy originally ask for the washroom job",
)
q(
    "question",
    "en",
    "plumbing-total-5550",
    "What's the plumbing total now that the underfloor heating is removed?",
)
q("question", "en", "plumber-start-date", "When can the plumber start?")
q("typo", "en", "plumbing-quote-all", "plumbng quote didier")
q("other", "de", "plumbing-cost-bathroom", "Wie viel kostet der Klempner für das Bad?")
q(
    "paraphrase",
    "en",
    "shower-tray-size-colour",
    "dimensions and colour of the base we want for the shower",
)
q("question", "en", "shower-tray-ordered", "Where did we buy the shower tray and how much was it?")
q("keyword", "en", "shower-tray-ordered", "Kinedo Kinesurf")
q("other", "zh", "shower-tray-size-colour", "淋浴底盘是什么颜色的？")
q("question", "en", "karim-away-wedding", "Why is Karim missing the 10 October match?")
q(
    "paraphrase",
    "en",
    "cover-for-karim-marc",
    "who stepped in on the bench when the assistant was at a wedding",
)
q("other", "es", "cover-for-karim-marc", "¿Quién sustituyó a Karim el 10 de octubre?")
q("paraphrase", "en", "methimazole-one-box-left", "the cat's thyroid tablets are running low")
q("question", "en", "methimazole-cost", "How much did Moustache's pills cost?")
q("question", "en", "methimazole-pickup", "When can I collect the cat's medication at the clinic?")
q("other", "ja", "cat-t4-test", "猫の血液検査はいつ？")
q(
    "paraphrase",
    "en",
    "goethe-homework-konjunktiv",
    "what grammar practice is due for my language class",
)
q("keyword", "en", "goethe-homework-konjunktiv", "Konjunktiv II homework")
q("other", "de", "goethe-homework-konjunktiv", "Welche Hausaufgaben habe ich für den Deutschkurs?")
q("paraphrase", "en", "edf-bill", "how much was the power bill for the rented place")
q("typo", "en", "edf-bill", "electricty bil EDF")
q("other", "fr", "edf-bill", "combien était la facture d'électricité ce mois-ci ?")
q("paraphrase", "en", "plumber-deposit", "upfront payment to the pipe fitter")
q("question", "en", "plumber-deposit-reference", "What was the reference on the deposit transfer?")
q("keyword", "en", "plumber-deposit", "deposit 30 percent")
q("other", "zh", "plumber-deposit", "给水管工的定金是多少？")
q(
    "paraphrase",
    "en",
    "zellige-shower-choice",
    "which green handmade tiles did we pick for the shower and from which shop",
)
q("question", "en", "zellige-quantity", "How many square metres of zellige did we order?")
q("typo", "en", "zellige-colour", "zelige tiles colour")
q("other", "fr", "zellige-shower-choice", "quelle couleur pour le carrelage du mur de la douche ?")
q("keyword", "en", "zellige-price", "tile price sqm")
q("paraphrase", "en", "terrazzo-bathroom-floor", "what goes on the ground surface of the washroom")
q("keyword", "en", "terrazzo-bathroom-floor", "terrazzo bathroom floor")
q("other", "de", "terrazzo-bathroom-floor", "Welche Fliesen kommen auf den Badboden?")
q(
    "paraphrase",
    "en",
    "studio-soundproofing",
    "how will we stop Jonas's music room from leaking noise",
)
q(
    "question",
    "en",
    "studio-insulation-order",
    "What insulation did Jonas order for the studio wall?",
)
q("question", "en", "studio-room", "Which room will be Jonas's studio?")
q("keyword", "en", "studio-soundproofing", "Placo Phonique studio")
q("other", "es", "studio-soundproofing", "¿Cómo se va a insonorizar el estudio de Jonas?")
q("other", "ja", "studio-dimensions", "スタジオにする部屋の広さは？")
q(
    "paraphrase",
    "en",
    "run-12km-quays",
    "gentle jog beside the river at the start of October, what pace",
)
q("typo", "en", "run-12km-quays", "rhone quays run pase")
q("paraphrase", "en", "first-aid-kit-order", "what supplies did I buy for the team's medical kit")
q("keyword", "en", "first-aid-kit-order", "first-aid kit order")
q("other", "fr", "first-aid-kit-order", "qu'est-ce que j'ai commandé pour la trousse de secours ?")
q("question", "en", "sophie-dinner-vegetarian", "What should I bring to Sophie's dinner?")
q("paraphrase", "en", "sophie-dinner-vegetarian", "does my friend from work eat meat")
q("other", "de", "sophie-dinner-vegetarian", "Isst Sophie Fleisch?")
q(
    "paraphrase",
    "en",
    "match-saint-genis-win",
    "result of our first home fixture in October and who got the goals",
)
q("question", "en", "match-saint-genis-win", "Who scored against Olympique Saint-Genis?")
q("typo", "en", "match-saint-genis-win", "saint genis mach score")
q("other", "zh", "match-saint-genis-win", "对圣热尼的比赛比分是多少？")
q(
    "paraphrase",
    "en",
    "keeper-rotation-friendlies",
    "a mother wants her son to try playing between the posts",
)
q("question", "en", "keeper-rotation-friendlies", "What's our policy on rotating the goalkeeper?")
q("other", "es", "keeper-rotation-friendlies", "¿Puede Noah jugar de portero?")
q("question", "en", "theo-spare-inhaler", "What did I ask Théo's parents to provide?")
q(
    "paraphrase",
    "en",
    "bibs-cost-reimburse",
    "how much were the practice vests and who pays me back",
)
q("question", "en", "bibs-reimbursed", "Has the treasurer paid me back for the bibs yet?")
q("keyword", "en", "bibs-decathlon", "chasubles Decathlon")
q("typo", "en", "bibs-cost-reimburse", "tresurer reimburse bibs")
q("other", "fr", "bibs-cost-reimburse", "combien ont coûté les chasubles ?")
q("paraphrase", "en", "club-agm", "when is the yearly general meeting of the football club")
q("keyword", "en", "club-agm", "club AGM date")
q("other", "de", "club-agm", "Wann ist die Mitgliederversammlung des Vereins?")
q("other", "ja", "club-agm", "クラブの総会はいつ？")
q(
    "paraphrase",
    "en",
    "parquet-batons-rompus",
    "what's under our feet in the lounge and is it worth keeping",
)
q("question", "en", "parquet-batons-rompus", "What pattern is the living-room parquet laid in?")
q("other", "fr", "parquet-batons-rompus", "le parquet du salon vaut-il la peine d'être restauré ?")
q("question", "en", "parquet-quote-1920", "How much does the parquet sanding cost?")
q(
    "paraphrase",
    "en",
    "parquet-quote-1920",
    "floor refinishing firm's price and how many coats of finish",
)
q("question", "en", "parquet-dates", "When is the parquet sanding booked?")
q("keyword", "en", "parquet-morel-all", "Parquets Morel quote")
q("typo", "en", "parquet-dates", "parquet sandng dates")
q("other", "zh", "parquet-dates", "地板打磨需要几天，哪几天做？")
q("paraphrase", "en", "parquet-area", "surface area of wooden flooring to be refinished")
q("question", "en", "christmas-leave-confirmed", "Has my Christmas leave been approved?")
q(
    "paraphrase",
    "en",
    "christmas-leave-dates",
    "which days off did I ask for at the end of the year",
)
q("keyword", "en", "christmas-leave-dates", "Christmas leave dates")
q("other", "de", "christmas-leave-confirmed", "Wurde mein Weihnachtsurlaub genehmigt?")
q("other", "fr", "leave-confirm-by-20-oct", "quand Mme Pellerin doit-elle confirmer mes congés ?")
q("question", "en", "train-freiburg", "What time is our train to Mulhouse?")
q(
    "paraphrase",
    "en",
    "train-freiburg",
    "rail tickets for the trip to Jonas's family and what they cost",
)
q("keyword", "en", "train-freiburg", "TGV Mulhouse Freiburg")
q("typo", "en", "train-freiburg", "trian tickets freiberg")
q("other", "es", "train-freiburg", "¿Cuánto costaron los billetes de tren a Friburgo?")
q("paraphrase", "en", "rewiring-nfc15100", "electrical code the flat has to comply with")
q("keyword", "en", "rewiring-nfc15100", "NF C 15-100")
q("question", "en", "rewiring-whole-flat", "Does the whole flat need rewiring?")
q(
    "paraphrase",
    "en",
    "du-topic-supervisor",
    "subject of my analgesia research paper and who is guiding it",
)
q("question", "en", "du-topic-supervisor", "Who is my dissertation supervisor?")
q("other", "zh", "du-topic-supervisor", "我的论文题目是什么？")
q("other", "fr", "du-topic-supervisor", "qui dirige mon mémoire ?")
q("question", "en", "dentist-checkup-27-oct", "When is the dental check-up?")
q("paraphrase", "en", "dentist-name", "name and street of my tooth doctor")
q("typo", "en", "dentist-checkup-27-oct", "dentst checkup time")
q("other", "ja", "dentist-checkup-time", "歯科検診は何時から？")
q("question", "en", "opera-premiere-date", "When is the premiere of Les Contes d'Hoffmann?")
q("paraphrase", "en", "jonas-late-at-opera", "why is my partner coming home so late these weeks")
q("other", "de", "opera-premiere-date", "Wann ist die Opernpremiere?")
q("paraphrase", "en", "electrician-quote-11400", "how much will the sparky charge for everything")
q(
    "question",
    "en",
    "electrician-quote-11400",
    "How many RJ45 sockets are in the electrician's quote?",
)
q("keyword", "en", "electrician-quote-11400", "rewiring quote amount")
q("typo", "en", "electrician-quote-11400", "electrcian quote tableau")
q("other", "es", "electrician-quote-11400", "¿Cuánto cuesta la nueva instalación eléctrica?")
q(
    "paraphrase",
    "en",
    "drop-underfloor-heating",
    "what did we give up to keep the electrics costs in check",
)
q("question", "en", "drop-underfloor-heating-why", "Why did we drop the underfloor heating?")
q("keyword", "en", "drop-underfloor-heating", "underfloor heating bathroom")
q("other", "fr", "drop-underfloor-heating-why", "pourquoi a-t-on renoncé au plancher chauffant ?")
q(
    "question",
    "en",
    "drop-underfloor-heating-why",
    "How much had we planned to spend on the electrics originally?",
)
q("question", "en", "zwischentest-date", "When is the German mid-course test?")
q("typo", "en", "zwischentest-date", "zwischetest germn")
q("other", "de", "zwischentest-date", "Wann ist der Zwischentest?")
q("paraphrase", "en", "zwischentest-moved", "who postponed my language exam and to when")
q("paraphrase", "en", "leave-reminder-monthly", "monthly nudge about holiday requests")
q(
    "question",
    "en",
    "leave-reminder-14th",
    "On which day of the month does the leave reminder fire?",
)
q(
    "paraphrase",
    "en",
    "health-questionnaire-missing",
    "which kids hadn't turned in their medical forms",
)
q("question", "en", "all-kids-cleared", "Are all the players cleared to play?")
q("keyword", "en", "health-questionnaire-all", "health questionnaire missing")
q("typo", "en", "health-questionnaire-all", "helth questionaire lucas")
q("other", "es", "health-questionnaire-missing", "¿Quién no ha entregado el cuestionario de salud?")
q("paraphrase", "en", "intervals-tete-dor", "speed session in the big park, how many repeats")
q("keyword", "en", "intervals-tete-dor", "800m intervals")
q("typo", "en", "intervals-tete-dor", "intervls tete d'or")
q("question", "en", "shopping-list", "What was on my shopping list?")
q("keyword", "en", "shopping-list", "cat litter")
q("other", "ja", "shopping-list", "買い物リストには何がある？")
q("paraphrase", "en", "training-oct7-drills", "drills we did at the Wednesday session")
q("question", "en", "training-oct7-drills", "How many kids came to training on 7 October?")
q("keyword", "en", "training-oct7-drills", "passing triangles")
q("paraphrase", "en", "half-match-rule", "minimum playing time rule for each child")
q("question", "en", "half-match-rule", "Does every kid get to play in matches?")
q("other", "fr", "half-match-rule", "combien de temps chaque enfant doit-il jouer par match ?")
q("other", "zh", "half-match-rule", "每个孩子每场比赛至少上场多久？")
q(
    "paraphrase",
    "en",
    "load-bearing-wall-doorway",
    "can we knock through between the cooking area and the lounge",
)
q("question", "en", "load-bearing-wall-doorway", "How wide will the kitchen doorway be?")
q("keyword", "en", "load-bearing-wall-doorway", "load-bearing wall")
q("typo", "en", "load-bearing-wall-doorway", "load bearng wal kitchen")
q("other", "de", "load-bearing-wall-doorway", "Kann die Wand zwischen Küche und Wohnzimmer weg?")
q("paraphrase", "en", "sophie-swap-all", "which overnight duties did my coworker and I trade")
q("question", "en", "sophie-swap-i-work-29", "Which night am I working instead of Sophie?")
q("keyword", "en", "sophie-swap-all", "night swap Sophie")
q("other", "fr", "sophie-swap-she-covers-22", "quelle nuit Sophie me remplace-t-elle ?")
q("other", "ja", "sophie-swap-all", "ソフィーとの夜勤の交換はいつ？")
q("paraphrase", "en", "cat-t4-test", "blood work on the cat's hormone levels, when is it")
q("keyword", "en", "cat-t4-test", "T4 blood test")
q("question", "en", "electrician-start", "When does the electrician start?")
q("paraphrase", "en", "electrician-duration", "how long will the wiring crew be on site")
q("typo", "en", "electrician-start", "electrican start date")
q("other", "zh", "electrician-start", "电工什么时候开工？")
q(
    "paraphrase",
    "en",
    "vaulx-meeting-point",
    "rendezvous spot and time before the Saturday away fixture",
)
q("question", "en", "vaulx-meeting-point", "What time do we meet before the FC Vaulx match?")
q("paraphrase", "en", "loan-drawdown-15000", "first chunk of the bank borrowing that was paid out")
q("keyword", "en", "loan-drawdown-15000", "loan drawdown")
q("typo", "en", "loan-drawdown-15000", "credit mutuel drawdwn")
q("other", "fr", "loan-drawdown-15000", "combien la banque a-t-elle débloqué pour les travaux ?")
q("question", "en", "night-shifts-13-15-oct", "Which nights am I working the week of 12 October?")
q("paraphrase", "en", "ute-stay-bernd-65", "my partner's mother wants us to stay longer, why")
q("question", "en", "ute-stay-bernd-65", "When does Bernd turn 65?")
q("keyword", "en", "ute-stay-bernd-65", "Bernd 65th birthday")
q("other", "de", "ute-stay-bernd-65", "Bis wann sollen wir in Freiburg bleiben?")
q("paraphrase", "en", "vaulx-loss", "how did the away game go and how did the children cope")
q("question", "en", "vaulx-loss", "What was the score at FC Vaulx-en-Velin?")
q("other", "es", "vaulx-loss", "¿Cómo terminó el partido en Vaulx-en-Velin?")
q("paraphrase", "en", "maelys-ankle", "girl who hurt her foot during a match")
q("question", "en", "maelys-two-weeks", "How long is Maëlys out of training?")
q("keyword", "en", "maelys-ankle", "Maëlys ankle sprain")
q("typo", "en", "maelys-ankle", "maelys ancle injury")
q("other", "zh", "maelys-ankle", "玛埃利斯的脚踝怎么了？")
q("other", "fr", "maelys-two-weeks", "Maëlys peut-elle reprendre l'entraînement ?")
q("paraphrase", "en", "marc-offers-help", "which dad volunteered to help at future trips away")
q("question", "en", "studio-dimensions", "What are the dimensions of the second bedroom?")
q("keyword", "en", "studio-dimensions", "second bedroom measurements")
q("paraphrase", "en", "studio-no-foam", "what did we rule out for the music room acoustics")
q("keyword", "en", "recovery-jog", "recovery jog")
q("question", "en", "race-bib-8412", "What's my race number for Marseille–Cassis?")
q("paraphrase", "en", "race-shuttle-bus", "coach back from the finish town and its price")
q("typo", "en", "race-bib-8412", "marseile cassis bib numbr")
q("other", "ja", "race-bib-8412", "マルセイユ～カシのゼッケン番号は？")
q("paraphrase", "en", "race-plan", "pacing strategy for the 20 km road race")
q("question", "en", "race-plan", "What is my target time for Marseille–Cassis?")
q("other", "fr", "race-plan", "quel est mon objectif de temps pour la course ?")
q("keyword", "en", "gineste", "Col de la Gineste")
q("question", "en", "zellige-delivery", "When are the tiles being delivered?")
q("paraphrase", "en", "zellige-carry-fee", "extra fee for hauling the tiles up the stairs")
q("keyword", "en", "zellige-delivery", "zellige delivery")
q("other", "es", "zellige-carry-fee", "¿Cuánto cuesta subir los azulejos hasta el cuarto piso?")
q("paraphrase", "en", "skip-rental", "container for the building rubble, its size and price")
q("question", "en", "skip-permit", "Do we need a permit for the skip?")
q("keyword", "en", "skip-rental", "Lyon Bennes skip")
q("typo", "en", "skip-permit", "skip permitt metropole")
q("other", "de", "skip-rental", "Wie viel kostet der Container für den Bauschutt?")
q("question", "en", "mathieu-february-visit", "When is Mathieu visiting France?")
q("paraphrase", "en", "mathieu-february-visit", "my brother's trip over here early next year")
q("other", "zh", "mathieu-february-visit", "马蒂厄什么时候来法国？")
q("question", "en", "skip-permit-dates", "Which dates does the skip permit cover?")
q(
    "other",
    "fr",
    "skip-permit-dates",
    "pour quelles dates ai-je demandé le permis de stationnement ?",
)
q("paraphrase", "en", "chanques-bps", "key paper on a behaviour-based scale for sedated patients")
q("keyword", "en", "chanques-bps", "Behavioral Pain Scale")
q("typo", "en", "chanques-bps", "chanqes BPS referance")
q("other", "es", "chanques-bps", "¿Cuál es la referencia clave para la tesina?")
q("paraphrase", "en", "vitamin-d-reminder", "monthly supplement nudge")
q("question", "en", "vitamin-d-reminder", "When should I take my vitamin D?")
q("typo", "en", "vitamin-d-reminder", "vitamine D ampule reminder")
q("other", "ja", "vitamin-d-reminder", "ビタミンDはいつ飲む？")
q("paraphrase", "en", "loop-earplugs", "what did I buy to help me sleep in the daytime")
q("keyword", "en", "loop-earplugs", "Loop earplugs")
q("other", "zh", "loop-earplugs", "我买了什么牌子的耳塞？")
q("question", "en", "karim-training-alone", "Who ran training on 14 October?")
q(
    "paraphrase",
    "en",
    "karim-training-alone",
    "attendance when the assistant took practice on his own",
)
q("question", "en", "opera-with-sophie", "Who am I going to the opera premiere with?")
q("paraphrase", "en", "opera-with-sophie", "where are our seats for the opening night")
q("other", "es", "opera-with-sophie", "¿Con quién voy al estreno de la ópera?")
q("paraphrase", "en", "floor-plan-v4-cupboard", "what's new in the final version of the layout")
q(
    "question",
    "en",
    "floor-plan-v4-cupboard",
    "Where will the football kit bags be stored in the new flat?",
)
q("keyword", "en", "entrance-cupboard", "entrance cupboard")
q("other", "fr", "floor-plan-v4-cupboard", "qu'est-ce que la version finale du plan ajoute ?")
q("paraphrase", "en", "invoices-factures-tab", "where should paid bills for the works be logged")
q("keyword", "en", "invoices-factures-tab", "Factures tab")
q("typo", "en", "invoices-factures-tab", "invoce tracking sheet")
q("other", "de", "invoices-factures-tab", "Wo sollen die bezahlten Rechnungen eingetragen werden?")
q("paraphrase", "en", "paint-colours", "wall colour for the lounge and the sleeping room")
q("question", "en", "paint-colours", "What paint did we choose for the living room?")
q("keyword", "en", "paint-colours", "Tollens Lin brut")
q("typo", "en", "paint-colours", "paint colur bedroom sage")
q("other", "zh", "paint-colours", "卧室刷什么颜色？")
q("other", "ja", "paint-colours", "リビングの壁は何色にする？")
q(
    "paraphrase",
    "en",
    "works-started-skip-arrived",
    "first day on site, what time did the tear-out begin",
)
q("question", "en", "works-started-skip-arrived", "When did the skip arrive?")
q("other", "fr", "works-started-skip-arrived", "quand les travaux ont-ils commencé ?")
q(
    "paraphrase",
    "en",
    "neighbour-dupuis-noise",
    "complaint from downstairs about the racket and what we agreed",
)
q("question", "en", "neighbour-dupuis-noise", "What hours are we allowed to drill?")
q("keyword", "en", "neighbour-dupuis-noise", "neighbour noise complaint")
q("typo", "en", "neighbour-dupuis-noise", "neigbour dupuis noise")
q("other", "de", "neighbour-dupuis-noise", "Was habe ich dem Nachbarn geschenkt?")
q("other", "es", "neighbour-dupuis-noise", "¿A qué horas se puede taladrar?")
q(
    "paraphrase",
    "en",
    "lead-pipes",
    "unexpected old plumbing found behind the cooking area and the extra cost",
)
q("keyword", "en", "lead-pipes", "lead pipes")
q("other", "zh", "lead-pipes", "更换铅管要多付多少钱？")
q("other", "fr", "lead-pipes", "combien coûte le remplacement des tuyaux en plomb ?")
q(
    "question",
    "en",
    "toussaint-no-training",
    "Is there U11 training during the autumn school holidays?",
)
q(
    "paraphrase",
    "en",
    "toussaint-no-training",
    "when do practices pick up again after the half-term",
)
q("other", "ja", "toussaint-no-training", "秋休み明けの最初の練習はいつ？")
q("other", "de", "toussaint-no-training", "Gibt es in den Herbstferien Training?")
q(
    "paraphrase",
    "en",
    "long-run-monts-dor",
    "big endurance outing in the hills just north of the city and its pace",
)
q("keyword", "en", "long-run-monts-dor", "Monts d'Or long run")
q("question", "en", "no-german-class-27-oct", "Is there German class on 27 October?")
q("paraphrase", "en", "no-german-class-27-oct", "language school break, which Tuesday is off")
q(
    "paraphrase",
    "en",
    "ikea-order",
    "when will the cabinets and appliances for the new cooking space arrive",
)
q("question", "en", "ikea-order", "How much was the IKEA kitchen order?")
q("keyword", "en", "ikea-order", "IKEA Saint-Priest order")
q("typo", "en", "ikea-order", "ikea kichen delivery")
q("other", "es", "ikea-order", "¿Cuándo se entrega la cocina de IKEA?")
q(
    "paraphrase",
    "en",
    "foncia-move-out-inspection",
    "appointment to hand back the keys and check over the rental",
)
q("question", "en", "foncia-move-out-inspection", "When is the état des lieux de sortie?")
q("keyword", "en", "foncia-move-out-inspection", "move-out inspection")
q("typo", "en", "foncia-move-out-inspection", "etat des leiux sortie")
q("other", "de", "foncia-move-out-inspection", "Wann ist die Wohnungsübergabe in Villeurbanne?")
q("question", "en", "sophie-birthday-gift", "When is Sophie's birthday?")
q("paraphrase", "en", "sophie-birthday-gift", "present idea for my colleague")
q("other", "zh", "sophie-birthday-gift", "索菲的生日礼物送什么？")
q("other", "fr", "sophie-birthday-gift", "quel cadeau pour l'anniversaire de Sophie ?")
q("paraphrase", "en", "race-hotel-train", "where am I staying the night before the race")
q("question", "en", "race-hotel-train", "What time is the train to Marseille?")
q("keyword", "en", "race-hotel-train", "Vieux-Port hotel")
q(
    "question",
    "en",
    "budget-committed",
    "How much of the renovation budget has been committed so far?",
)
q("other", "zh", "budget-committed", "目前装修预算已经花了多少？")
q("paraphrase", "en", "moustache-vomiting", "our pet was sick, what did the vet advise")
q("question", "en", "moustache-better", "Is Moustache feeling better?")
q("keyword", "en", "moustache-sick-and-better", "Moustache vomiting")
q("other", "es", "moustache-vomiting", "¿Por qué vomitó el gato?")
q("question", "en", "du-outline-sent", "Have I sent the dissertation outline?")
q("paraphrase", "en", "du-outline-sent", "who did I email the thesis structure draft to")
q("other", "ja", "du-outline-sent", "論文の詳細なアウトラインは誰に送った？")
q("paraphrase", "en", "race-taper", "cutting back training in the days before the race")
q("keyword", "en", "race-taper", "taper easy runs")
q("question", "en", "velov-renewal", "How much was the Vélo'v subscription?")
q("typo", "en", "velov-renewal", "velov subscripton renew")
q("other", "fr", "velov-renewal", "combien coûte l'abonnement Vélo'v ?")
q("paraphrase", "en", "zellige-chipped", "damaged pieces in the tile shipment")
q("question", "en", "zellige-chipped", "Were any of the zellige tiles broken?")
q("other", "de", "zellige-chipped", "Waren Fliesen bei der Lieferung beschädigt?")
q("paraphrase", "en", "race-bag", "what did I pack for race day")
q("keyword", "en", "race-bag", "Maurten gels")
q(
    "paraphrase",
    "en",
    "extra-day-shift-5-nov",
    "additional daytime duty my boss asked for, paid as overtime",
)
q("question", "en", "extra-day-shift-5-nov", "Am I working on 5 November?")
q("other", "zh", "extra-day-shift-5-nov", "11月5日我要加班吗？")
q(
    "other",
    "fr",
    "extra-day-shift-5-nov",
    "est-ce que je fais des heures supplémentaires en novembre ?",
)
q("paraphrase", "en", "kitchen-splashback", "what goes on the wall behind the cooktop")
q("keyword", "en", "kitchen-splashback", "kitchen splashback")
q("other", "ja", "kitchen-splashback", "キッチンのコンロの後ろの壁には何を使う？")
q(
    "paraphrase",
    "en",
    "cost-split-60-40",
    "how do we share the cost of the works between the two of us",
)
q("question", "en", "cost-split-60-40", "What share of the flat is mine on the deed?")
q("other", "de", "cost-split-60-40", "Wie teilen wir die Renovierungskosten auf?")
q("typo", "en", "cost-split-60-40", "cost splt 60/40")
q("question", "en", "race-result", "What was my Marseille–Cassis finishing time?")
q("paraphrase", "en", "race-result", "how hot was it at the end of the coastal race")
q("keyword", "en", "race-result", "race result time")
q("other", "es", "race-result", "¿Cuál fue mi tiempo en la Marseille–Cassis?")
q("other", "zh", "race-result", "马赛-卡西斯比赛的成绩是多少？")
q("paraphrase", "en", "calves-no-running", "legs sore after the race, break from jogging")
q("question", "en", "calves-no-running", "When can I run again after the race?")
q("question", "en", "wifi-box-location", "Where does the Wi-Fi box go?")
q("paraphrase", "en", "wifi-box-location", "location of the internet router in the new place")
q("typo", "en", "wifi-box-location", "wifi bx location")
q("other", "ja", "wifi-box-location", "Wi-Fiルーターはどこに置く？")
q(
    "paraphrase",
    "en",
    "strava-weekly-only",
    "how much running detail do I want from the assistant now",
)
q("question", "en", "strava-weekly-only", "Do I still want Strava summaries after each run?")
q("other", "fr", "strava-weekly-only", "quel résumé Strava est-ce que je veux maintenant ?")
q("paraphrase", "en", "annecy-weekend", "plans for a trip to my mother's town for her birthday")
q("question", "en", "annecy-weekend", "Am I going to Annecy in November?")
q("question", "en", "cavity-filling", "When is my filling?")
q("paraphrase", "en", "cavity-filling", "what did the tooth check find")
q("keyword", "en", "cavity-filling", "cavity filling")
q("other", "de", "cavity-filling", "Wann ist die Zahnfüllung?")
q("other", "es", "cavity-filling", "¿Tengo alguna caries?")
q("paraphrase", "en", "plumbing-first-fix-invoice", "second bill from the pipe fitter, how much")
q("question", "en", "plumbing-first-fix-invoice", "Is the shower drain installed?")
q("keyword", "en", "plumbing-first-fix-invoice", "plumbing first fix")
q("other", "zh", "plumbing-first-fix-invoice", "水管工第二张发票多少钱？")
q(
    "question",
    "en",
    "tournament-cancelled-next-match",
    "When is the next U11 match after the cancelled tournament?",
)
q(
    "paraphrase",
    "en",
    "tournament-cancelled-next-match",
    "is the holiday youth competition still going ahead",
)
q("keyword", "en", "tournament-cancelled-next-match", "AS Buers Villeurbanne")
q("typo", "en", "tournament-cancelled-next-match", "toussaint tournamnet cancelled")
q("other", "ja", "tournament-cancelled-next-match", "11月7日の試合の相手はどこ？")
q("other", "fr", "tournament-cancelled-next-match", "le tournoi de la Toussaint est-il annulé ?")
q("question", "en", "goethe-resumes", "When does German class start again?")
q("other", "es", "goethe-resumes", "¿Cuándo vuelven las clases de alemán?")
q("paraphrase", "en", "pocket-door", "space-saving sliding option for the washroom entrance")
q("keyword", "en", "pocket-door", "pocket door bathroom")
q("typo", "en", "pocket-door", "pocet door galandage")
q("other", "de", "pocket-door", "Welche Tür schlägt Lina für das Bad vor?")


def main():
    out = []
    for i, (kind, lang, fact, text) in enumerate(Q, 1):
        answers = [P(c) for c in FACTS[fact].split()]
        out.append(
            {
                "id": f"f4-{i:03d}",
                "fact": fact,
                "kind": kind,
                "lang": lang,
                "query": text,
                "split": "fresh4",
                "answers": answers,
            }
        )
    with open(os.path.join(HERE, "fresh4.jsonl"), "w", encoding="utf-8") as f:
        for o in out:
            f.write(json.dumps(o, ensure_ascii=False) + "\n")
    print(len(out), "queries written")


if __name__ == "__main__":
    main()
