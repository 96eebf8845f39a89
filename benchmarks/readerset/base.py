"""Building blocks of the reader training corpus: style knobs, multilingual field labels, a page builder that
records the questions whose gold answers it prints, and the arrangements (layout skeletons) templates use.

A template is a function of a :class:`Sheet` (one seeded document): it prints labelled fields, tables and prose
through the sheet, which registers a question pool as it goes (look-ups, generic, table cells, relations,
entity types, values inside prose, unanswerable ones for fields the template left out), and finally lays the
rendered blocks out with one of the arrangements below. Nothing here copies the broad set's layouts; only the
seeded value helpers of :mod:`broadset.common` are shared.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from broadset.common import Ctx, e

LANG_OF = {"de_DE": "de", "fr_FR": "fr", "es_ES": "es"}

#: field -> language -> label synonyms (English always present; the first English one names the field in questions)
LABELS: dict[str, dict[str, tuple[str, ...]]] = {
    "invoice_number": {
        "en": ("Invoice number", "Invoice no.", "Invoice #", "Invoice ref."),
        "de": ("Rechnungsnummer", "Rechnungs-Nr."),
        "fr": ("N° de facture", "Facture n°"),
        "es": ("N.º de factura", "Número de factura"),
    },
    "date": {"en": ("Date", "Issue date", "Dated"), "de": ("Datum",), "fr": ("Date",), "es": ("Fecha",)},
    "invoice_date": {
        "en": ("Invoice date", "Date of issue", "Issued on"),
        "de": ("Rechnungsdatum",),
        "fr": ("Date de facture", "Date d'émission"),
        "es": ("Fecha de factura", "Fecha de emisión"),
    },
    "due_date": {
        "en": ("Due date", "Payment due", "Pay by"),
        "de": ("Fällig am", "Zahlbar bis"),
        "fr": ("Date d'échéance", "Échéance"),
        "es": ("Fecha de vencimiento", "Vencimiento"),
    },
    "order_number": {
        "en": ("Order number", "Order no.", "PO number", "Purchase order"),
        "de": ("Bestellnummer", "Bestell-Nr."),
        "fr": ("N° de commande",),
        "es": ("N.º de pedido",),
    },
    "customer_number": {
        "en": ("Customer number", "Customer ID", "Client no.", "Account no."),
        "de": ("Kundennummer", "Kunden-Nr."),
        "fr": ("N° client",),
        "es": ("N.º de cliente",),
    },
    "subtotal": {
        "en": ("Subtotal", "Net amount", "Net total"),
        "de": ("Zwischensumme", "Nettobetrag"),
        "fr": ("Sous-total", "Total HT"),
        "es": ("Subtotal", "Base imponible"),
    },
    "vat": {"en": ("VAT", "Tax", "Sales tax", "GST"), "de": ("MwSt.", "USt."), "fr": ("TVA",), "es": ("IVA",)},
    "total": {
        "en": ("Total", "Amount due", "Grand total", "Total due", "Balance due"),
        "de": ("Gesamtbetrag", "Summe", "Endbetrag"),
        "fr": ("Total TTC", "Montant total"),
        "es": ("Total", "Importe total"),
    },
    "iban": {"en": ("IBAN",), "de": ("IBAN",), "fr": ("IBAN",), "es": ("IBAN",)},
    "phone": {
        "en": ("Phone", "Tel.", "Telephone"),
        "de": ("Telefon", "Tel."),
        "fr": ("Téléphone", "Tél."),
        "es": ("Teléfono", "Tel."),
    },
    "email": {"en": ("E-mail", "Email"), "de": ("E-Mail",), "fr": ("Courriel", "E-mail"), "es": ("Correo", "E-mail")},
    "vat_number": {
        "en": ("VAT number", "VAT reg. no.", "Tax ID"),
        "de": ("USt-IdNr.", "Steuernummer"),
        "fr": ("N° TVA intracom.",),
        "es": ("NIF", "CIF"),
    },
    "payment_terms": {
        "en": ("Payment terms", "Terms"),
        "de": ("Zahlungsbedingungen",),
        "fr": ("Conditions de paiement",),
        "es": ("Condiciones de pago",),
    },
    "delivery_date": {
        "en": ("Delivery date", "Delivery by", "Ship date"),
        "de": ("Lieferdatum", "Liefertermin"),
        "fr": ("Date de livraison",),
        "es": ("Fecha de entrega",),
    },
    "cashier": {
        "en": ("Cashier", "Served by", "Operator"),
        "de": ("Kassierer", "Bedient von"),
        "fr": ("Caissier", "Servi par"),
        "es": ("Cajero", "Le atendió"),
    },
    "payment_method": {
        "en": ("Payment method", "Paid by", "Payment"),
        "de": ("Zahlungsart", "Bezahlt mit"),
        "fr": ("Mode de paiement", "Réglé par"),
        "es": ("Forma de pago", "Pagado con"),
    },
    "account_number": {
        "en": ("Account number", "Account no.", "Acct. no."),
        "de": ("Kontonummer", "Konto-Nr."),
        "fr": ("N° de compte",),
        "es": ("N.º de cuenta",),
    },
    "opening_balance": {
        "en": ("Opening balance", "Previous balance", "Balance brought forward"),
        "de": ("Anfangssaldo", "Alter Kontostand"),
        "fr": ("Solde initial", "Ancien solde"),
        "es": ("Saldo inicial", "Saldo anterior"),
    },
    "closing_balance": {
        "en": ("Closing balance", "New balance", "Balance carried forward"),
        "de": ("Endsaldo", "Neuer Kontostand"),
        "fr": ("Solde final", "Nouveau solde"),
        "es": ("Saldo final", "Saldo actual"),
    },
    "period": {
        "en": ("Statement period", "Period", "Billing period"),
        "de": ("Zeitraum", "Abrechnungszeitraum"),
        "fr": ("Période",),
        "es": ("Periodo",),
    },
    "meter_number": {
        "en": ("Meter number", "Meter no.", "Meter ID"),
        "de": ("Zählernummer",),
        "fr": ("N° de compteur",),
        "es": ("N.º de contador",),
    },
    "consumption": {
        "en": ("Consumption", "Units used", "Usage"),
        "de": ("Verbrauch",),
        "fr": ("Consommation",),
        "es": ("Consumo",),
    },
    "employee": {
        "en": ("Employee", "Employee name", "Name"),
        "de": ("Mitarbeiter", "Name"),
        "fr": ("Salarié",),
        "es": ("Empleado", "Trabajador"),
    },
    "employee_id": {
        "en": ("Employee ID", "Staff no.", "Personnel no."),
        "de": ("Personalnummer", "Personal-Nr."),
        "fr": ("Matricule",),
        "es": ("N.º de empleado",),
    },
    "gross_pay": {
        "en": ("Gross pay", "Gross salary", "Total gross"),
        "de": ("Bruttolohn", "Gesamtbrutto"),
        "fr": ("Salaire brut",),
        "es": ("Salario bruto", "Total devengado"),
    },
    "net_pay": {
        "en": ("Net pay", "Net salary", "Take-home pay"),
        "de": ("Nettolohn", "Auszahlungsbetrag"),
        "fr": ("Net à payer", "Salaire net"),
        "es": ("Líquido a percibir", "Salario neto"),
    },
    "pay_date": {
        "en": ("Pay date", "Payment date", "Paid on"),
        "de": ("Auszahlungsdatum",),
        "fr": ("Date de paiement",),
        "es": ("Fecha de pago",),
    },
    "tracking_number": {
        "en": ("Tracking number", "Tracking no.", "Consignment no."),
        "de": ("Sendungsnummer", "Sendungsverfolgung"),
        "fr": ("N° de suivi",),
        "es": ("N.º de seguimiento",),
    },
    "weight": {
        "en": ("Weight", "Gross weight", "Parcel weight"),
        "de": ("Gewicht",),
        "fr": ("Poids",),
        "es": ("Peso",),
    },
    "reference": {
        "en": ("Reference", "Our ref.", "Ref."),
        "de": ("Unser Zeichen", "Referenz"),
        "fr": ("Réf.", "Notre référence"),
        "es": ("Ref.", "Nuestra referencia"),
    },
    "subject": {"en": ("Subject", "Re", "Regarding"), "de": ("Betreff",), "fr": ("Objet",), "es": ("Asunto",)},
    "to": {"en": ("To",), "de": ("An",), "fr": ("À",), "es": ("Para",)},
    "from": {"en": ("From",), "de": ("Von",), "fr": ("De",), "es": ("De",)},
    "cc": {"en": ("Cc", "Copy to"), "de": ("Kopie an",), "fr": ("Copie à",), "es": ("Copia a",)},
    "chair": {
        "en": ("Chair", "Chaired by", "Chairperson"),
        "de": ("Vorsitz", "Sitzungsleitung"),
        "fr": ("Président de séance",),
        "es": ("Preside",),
    },
    "minute_taker": {
        "en": ("Minutes taken by", "Recorder", "Secretary"),
        "de": ("Protokoll",),
        "fr": ("Secrétaire de séance",),
        "es": ("Secretario/a",),
    },
    "location": {
        "en": ("Location", "Venue", "Place", "Room"),
        "de": ("Ort", "Raum"),
        "fr": ("Lieu", "Salle"),
        "es": ("Lugar", "Sala"),
    },
    "time": {"en": ("Time", "Start time"), "de": ("Uhrzeit", "Beginn"), "fr": ("Heure",), "es": ("Hora",)},
    "next_meeting": {
        "en": ("Next meeting", "Date of next meeting"),
        "de": ("Nächste Sitzung",),
        "fr": ("Prochaine réunion",),
        "es": ("Próxima reunión",),
    },
    "applicant": {
        "en": ("Full name", "Applicant name", "Name of applicant"),
        "de": ("Vollständiger Name",),
        "fr": ("Nom complet",),
        "es": ("Nombre completo",),
    },
    "birth_date": {
        "en": ("Date of birth", "Birth date", "DOB"),
        "de": ("Geburtsdatum",),
        "fr": ("Date de naissance",),
        "es": ("Fecha de nacimiento",),
    },
    "nationality": {
        "en": ("Nationality", "Citizenship"),
        "de": ("Staatsangehörigkeit",),
        "fr": ("Nationalité",),
        "es": ("Nacionalidad",),
    },
    "position": {
        "en": ("Position applied for", "Position", "Role"),
        "de": ("Stelle", "Position"),
        "fr": ("Poste",),
        "es": ("Puesto",),
    },
    "start_date": {
        "en": ("Start date", "Available from", "Earliest start"),
        "de": ("Eintrittsdatum",),
        "fr": ("Date de début",),
        "es": ("Fecha de incorporación",),
    },
    "application_number": {
        "en": ("Application no.", "Application ID", "Reference number"),
        "de": ("Antragsnummer",),
        "fr": ("N° de dossier",),
        "es": ("N.º de solicitud",),
    },
    "certificate_number": {
        "en": ("Certificate no.", "Certificate number", "Serial no."),
        "de": ("Zertifikat-Nr.",),
        "fr": ("N° de certificat",),
        "es": ("N.º de certificado",),
    },
    "recipient": {
        "en": ("Awarded to", "Recipient", "Presented to"),
        "de": ("Verliehen an",),
        "fr": ("Décerné à",),
        "es": ("Otorgado a",),
    },
    "grade": {
        "en": ("Grade", "Result", "Classification"),
        "de": ("Note", "Ergebnis"),
        "fr": ("Mention",),
        "es": ("Calificación",),
    },
    "valid_until": {
        "en": ("Valid until", "Expiry date", "Expires"),
        "de": ("Gültig bis",),
        "fr": ("Valable jusqu'au",),
        "es": ("Válido hasta",),
    },
    "website": {"en": ("Website", "Web"), "de": ("Internet", "Web"), "fr": ("Site web",), "es": ("Web",)},
    "address": {"en": ("Address",), "de": ("Adresse", "Anschrift"), "fr": ("Adresse",), "es": ("Dirección",)},
    "course": {
        "en": ("Course", "Module", "Subject"),
        "de": ("Lehrveranstaltung", "Modul"),
        "fr": ("Cours",),
        "es": ("Asignatura",),
    },
    "examiner": {
        "en": ("Examiner", "Lecturer", "Instructor"),
        "de": ("Prüfer", "Dozent"),
        "fr": ("Examinateur", "Enseignant"),
        "es": ("Examinador", "Profesor"),
    },
    "duration": {
        "en": ("Duration", "Time allowed", "Length"),
        "de": ("Dauer", "Bearbeitungszeit"),
        "fr": ("Durée",),
        "es": ("Duración",),
    },
    "total_marks": {
        "en": ("Total marks", "Maximum points", "Total points"),
        "de": ("Gesamtpunktzahl",),
        "fr": ("Barème total",),
        "es": ("Puntuación máxima",),
    },
    "student_id": {
        "en": ("Student ID", "Candidate number", "Matriculation no."),
        "de": ("Matrikelnummer",),
        "fr": ("N° étudiant",),
        "es": ("N.º de matrícula",),
    },
    "model": {
        "en": ("Model", "Model number", "Part no."),
        "de": ("Modell", "Artikelnummer"),
        "fr": ("Modèle", "Référence"),
        "es": ("Modelo", "Referencia"),
    },
    "price": {"en": ("Price", "List price", "Unit price"), "de": ("Preis",), "fr": ("Prix",), "es": ("Precio",)},
    "warranty": {"en": ("Warranty", "Guarantee"), "de": ("Garantie",), "fr": ("Garantie",), "es": ("Garantía",)},
    "valid_from": {
        "en": ("Valid from", "Effective from", "Prices valid from"),
        "de": ("Gültig ab",),
        "fr": ("Valable à partir du",),
        "es": ("Válido desde",),
    },
    "route": {"en": ("Route", "Line", "Service"), "de": ("Linie",), "fr": ("Ligne",), "es": ("Línea",)},
    "operator": {"en": ("Operator", "Operated by"), "de": ("Betreiber",), "fr": ("Exploitant",), "es": ("Operador",)},
    "doi": {"en": ("DOI",)},
    "keywords": {"en": ("Keywords", "Index terms")},
    "received": {"en": ("Received", "Submitted")},
    "conference": {"en": ("Conference", "Event")},
    "registration_fee": {"en": ("Registration fee", "Fee")},
    "report_number": {"en": ("Report no.", "Document ID", "Report reference")},
    "prepared_by": {
        "en": ("Prepared by", "Author", "Compiled by"),
        "de": ("Erstellt von",),
        "fr": ("Préparé par",),
        "es": ("Elaborado por",),
    },
    "flight_number": {"en": ("Flight number",)},
    "policy_number": {"en": ("Policy number",)},
    "passport_number": {"en": ("Passport number",)},
    "room_number": {"en": ("Room number",)},
    "licence_plate": {"en": ("Licence plate",)},
    "discount": {"en": ("Discount",)},
    "deadline": {"en": ("Deadline", "Closing date"), "de": ("Frist",), "fr": ("Date limite",), "es": ("Fecha límite",)},
    "signature_date": {
        "en": ("Date of signature", "Signed on"),
        "de": ("Datum der Unterschrift",),
        "fr": ("Fait le",),
        "es": ("Firmado el",),
    },
}

#: fields a question may ask for on a kind that never prints them (their answer is "not on this page")
FOREIGN = (
    "flight_number",
    "policy_number",
    "passport_number",
    "room_number",
    "licence_plate",
    "iban",
    "tracking_number",
    "invoice_number",
    "student_id",
    "meter_number",
    "doi",
    "employee_id",
    "vat_number",
    "discount",
    "order_number",
    "deadline",
    "warranty",
    "birth_date",
    "certificate_number",
)

#: fields whose English labels read badly inside a question ("the dated") -> names a question uses instead
QNAMES = {
    "date": ("document date", "issue date", "date of the document"),
    "to": ("recipient of the memo",),
    "from": ("sender of the memo",),
    "cc": ("person copied in",),
    "time": ("start time",),
    "address": ("address",),
    "subject": ("subject",),
    "email": ("e-mail address",),
}
#: kinds whose long prose may run in two columns
TWO_COLUMN = ("letter", "memo", "paper", "report_table", "minutes", "spec_sheet")

#: value type -> question templates for a look-up ({l}: an English label of the field)
ASK = {
    "text": (
        "What is the {l}?",
        "Which {l} is given?",
        "What does the document give as the {l}?",
        "Tell me the {l}.",
        "What {l} is stated?",
    ),
    "id": (
        "What is the {l}?",
        "Which {l} is shown?",
        "What {l} does this page carry?",
        "Give the {l}.",
        "Which {l} is printed?",
    ),
    "date": (
        "What is the {l}?",
        "Which date is given as the {l}?",
        "What date is shown for the {l}?",
        "When is the {l}?",
    ),
    "money": ("What is the {l}?", "How much is the {l}?", "What amount is shown as the {l}?", "How large is the {l}?"),
    "person": (
        "Who is the {l}?",
        "Which person is named as the {l}?",
        "Who is listed as {l}?",
        "What name is given for the {l}?",
    ),
    "org": ("Which organisation is the {l}?", "What is the {l}?", "Who is the {l}?"),
}

#: generic slot -> plain questions that do not name a field
GENERIC = {
    "date": ("What is the date?", "What date is on the document?", "Which date does this carry?", "When is it dated?"),
    "title": ("What is the title?", "What is the title of the document?", "What is the heading?"),
    "total": ("What is the total?", "What is the total amount?", "How much is the total?"),
    "author": ("Who is the author?", "Who wrote this?", "Who is the first author?"),
    "sender": ("Who is the sender?", "Who sent this?", "Who is it from?"),
    "addressee": ("Who is the addressee?", "To whom is it addressed?", "Who is the recipient?"),
}

#: entity type -> question asking for the only value of that type on the page
ENTITY = {
    "phone": ("What phone number is listed?", "Which telephone number is given?", "What number can one call?"),
    "email": ("Which e-mail address is given?", "What is the e-mail address?", "What email address appears?"),
    "iban": ("Which IBAN is shown?", "What bank account (IBAN) is given?"),
    "website": ("Which website is mentioned?", "What web address is shown?"),
    "postcode": ("What postcode appears in the address?", "Which postal code is given?"),
}

STAMPS = {
    "en": ("PAID", "COPY", "RECEIVED", "ORIGINAL", "APPROVED", "DRAFT", "FILED"),
    "de": ("BEZAHLT", "KOPIE", "EINGEGANGEN"),
    "fr": ("PAYÉ", "COPIE", "REÇU"),
    "es": ("PAGADO", "COPIA"),
}
PAGE = {"en": "Page 1 of 1", "de": "Seite 1 von 1", "fr": "Page 1 sur 1", "es": "Página 1 de 1"}

LABEL_POS = ("left", "right", "above", "colon", "boxed")
RULES = ("grid", "rows", "none", "zebra")


@dataclass(frozen=True)
class Knobs:
    """Style knobs drawn once per document beyond the font / colour of :class:`broadset.common.Style`."""

    lang: str
    label_pos: str
    rules: str
    columns: int
    header: bool
    footer: bool
    stamp: bool
    order: int
    upper: bool
    margin: int  # mm

    def digest(self, family: str) -> str:
        """A short id of (family, knobs) that stays the same for documents that differ only in their values."""
        key = (
            f"{family}|{self.lang}|{self.label_pos}|{self.rules}|{self.columns}|{self.header}|{self.footer}|"
            f"{self.stamp}|{self.order}|{self.upper}"
        )
        return hashlib.sha1(key.encode()).hexdigest()[:10]


@dataclass
class Q:
    """One question of a page's pool; ``evidence`` (default: the first answer) must be on the text layer."""

    question: str
    answers: list[str]
    family: str
    field: str
    evidence: list[str] = field(default_factory=list)

    def shown(self) -> list[str]:
        """Strings the build checks against the page's text layer."""
        return self.evidence or self.answers[:1]


def _dedup(xs) -> list[str]:
    out: list[str] = []
    for x in xs:
        x = str(x).strip()
        if x and x not in out:
            out.append(x)
    return out


def lower_label(text: str) -> str:
    """A label as a question mentions it: lower case except acronyms (``VAT``, ``IBAN``, ``ID``)."""
    return " ".join(w if (w.isupper() and len(w) > 1) or w.rstrip(".").isupper() else w.lower() for w in text.split())


class Sheet:
    """One document under construction: its knobs, printed labels, blocks of HTML and question pool."""

    def __init__(self, ctx: Ctx, kind: str, tid: int, multilingual: bool = True):
        self.ctx, self.kind, self.tid = ctx, kind, tid
        r = ctx.rng
        lang = LANG_OF.get(ctx.locale, "en") if multilingual and r.random() < 0.55 else "en"
        self.k = Knobs(
            lang=lang,
            label_pos=r.choice(LABEL_POS),
            rules=r.choice(RULES),
            columns=2 if kind in TWO_COLUMN and r.random() < 0.45 else 1,
            header=r.random() < 0.45,
            footer=r.random() < 0.55,
            stamp=r.random() < 0.2,
            order=r.randrange(3),
            upper=r.random() < 0.25,
            margin=r.choice((12, 15, 18, 22)),
        )
        self.pool: list[Q] = []
        self.keys: set[str] = set()
        self._labels: dict[str, str] = {}

    @property
    def family(self) -> str:
        return f"{self.kind}-t{self.tid}"

    @property
    def rng(self):
        return self.ctx.rng

    # --- labels and questions ---------------------------------------------------------------------

    def lab(self, key: str) -> str:
        """The label this document prints for ``key`` (one synonym in its language, drawn once)."""
        if key not in self._labels:
            syn = LABELS[key].get(self.k.lang) or LABELS[key]["en"]
            self._labels[key] = self.rng.choice(syn)
        text = self._labels[key]
        return text.upper() if self.k.upper else text

    def ask(self, question: str, answers, family: str, fld: str, evidence=()) -> None:
        """Add a question to the pool."""
        self.pool.append(
            Q(question, _dedup([answers] if isinstance(answers, str) else answers), family, fld, list(evidence))
        )

    def phrase(self, key: str, vtype: str = "text") -> str:
        """A look-up question for ``key``, naming it by one of its English labels."""
        name = lower_label(self.rng.choice(QNAMES.get(key) or LABELS[key]["en"]))
        return self.rng.choice(ASK[vtype]).format(l=name)

    def fld(
        self,
        key: str,
        value: str,
        answers=None,
        vtype: str = "text",
        generic: str | None = None,
        optional: float = 0.0,
        entity: str | None = None,
        ask: bool = True,
    ) -> tuple[str, str] | None:
        """A labelled field: registers its look-up (and generic / entity-type) questions and returns
        ``(label, value)``; with ``optional`` the template leaves it out with that probability, and the pool
        gets an unanswerable question for it instead (returns None)."""
        if optional and self.rng.random() < optional:
            self.missing(key, vtype)
            return None
        self.keys.add(key)
        answers = _dedup([value, *(answers or [])])
        if ask:
            self.ask(self.phrase(key, vtype), answers, "lookup", key)
        if generic:
            self.generic(generic, answers)
        if entity:
            self.ask(self.rng.choice(ENTITY[entity]), answers, "entity_type", entity)
        return self.lab(key), value

    def generic(self, slot: str, answers, evidence=()) -> None:
        """A plain question ("What is the date?") answered by ``answers``."""
        self.ask(self.rng.choice(GENERIC[slot]), answers, "generic", slot, evidence)

    def missing(self, key: str, vtype: str = "text") -> None:
        """An unanswerable question: ``key`` is not on this page."""
        self.ask(self.phrase(key, vtype), [], "unanswerable", key)

    def foreign(self) -> None:
        """An unanswerable question for a field this kind does not print."""
        for key in self.rng.sample(FOREIGN, len(FOREIGN)):
            if key not in self.keys:
                self.missing(key, "date" if "date" in key or key == "deadline" else "id")
                return

    # --- HTML pieces ------------------------------------------------------------------------------

    def kv(self, pairs, pos: str | None = None) -> str:
        """Label / value pairs in the document's label position (left, right-aligned, above, after a colon on
        one line, or in boxes); ``None`` pairs (left-out fields) are skipped."""
        pairs = [p for p in pairs if p]
        pos = pos or self.k.label_pos
        if pos == "above":
            return (
                '<div class="kva">'
                + "".join(f'<div><div class="kl">{e(k)}</div><div class="kvv">{e(v)}</div></div>' for k, v in pairs)
                + "</div>"
            )
        if pos == "boxed":
            return (
                '<div class="kvb">'
                + "".join(f'<div><span class="kl">{e(k)}</span><br>{e(v)}</div>' for k, v in pairs)
                + "</div>"
            )
        if pos == "colon":
            return '<div class="kvc">' + "".join(f"<div><b>{e(k)}:</b> {e(v)}</div>" for k, v in pairs) + "</div>"
        align = "right" if pos == "right" else "left"
        return (
            '<table class="kvt">'
            + "".join(f'<tr><th style="text-align:{align}">{e(k)}</th><td>{e(v)}</td></tr>' for k, v in pairs)
            + "</table>"
        )

    def tbl(self, header, rows, numeric=(), foot=None, cls: str = "") -> str:
        """A data table ruled by the document's knob (grid, row rules, borderless, zebra)."""

        def cells(row, tag):
            return "".join(f"<{tag}{' class=n' if i in numeric else ''}>{e(c)}</{tag}>" for i, c in enumerate(row))

        head = f"<thead><tr>{cells(header, 'th')}</tr></thead>" if header else ""
        body = "".join(f"<tr>{cells(r, 'td')}</tr>" for r in rows)
        tail = "".join(f'<tr class="ft">{cells(r, "td")}</tr>' for r in foot or [])
        return f'<table class="dt r-{self.k.rules} {cls}">{head}<tbody>{body}{tail}</tbody></table>'

    def lines(self, lines, cls: str = "addr") -> str:
        """Lines of an address or a signature block."""
        return f'<div class="{cls}">' + "<br>".join(e(x) for x in lines) + "</div>"

    def para(self, text: str) -> str:
        return f"<p>{e(text)}</p>"

    # --- the page ---------------------------------------------------------------------------------

    def page(self, arrangement: str, blocks: dict[str, str], header: str = "", footer: str = "") -> str:
        """The document's ``<section>``: its blocks laid out by ``arrangement``, with the optional header
        and footer lines and a stamp."""
        b = {k: v for k, v in blocks.items() if v}
        html = ARRANGE[arrangement](self, b)
        s, k = self.ctx.style, self.k
        extra = ""
        if k.header and header:
            extra += f'<div class="hd">{e(header)}</div>'
        if k.footer:
            extra += f'<div class="fo">{e(footer)}{" · " if footer else ""}{e(PAGE[k.lang])}</div>'
        if k.stamp:
            word = self.rng.choice(STAMPS[k.lang])
            extra += (
                f'<div class="stamp" style="top:{self.rng.randint(30, 60)}%;right:{self.rng.randint(8, 20)}%">'
                f"{e(word)}</div>"
            )
        style = (
            f"font-family:'{s.font}';font-size:{s.size * 0.92:.1f}px;--acc:{s.accent};"
            f"padding:{k.margin}mm {k.margin + 2}mm;--hf:'{s.heading_font}'"
        )
        cols = " cols2" if k.columns == 2 else ""
        return f'<section class="doc{cols}" style="{style}">{extra}{html}</section>'


def _ordered(sheet: Sheet, names: list[str], b: dict[str, str]) -> str:
    """Blocks in the template's order, with one pair swapped by the order knob."""
    names = [n for n in names if n in b]
    if sheet.k.order and len(names) > 2:
        i = sheet.k.order % (len(names) - 1)
        if i:
            names[i], names[i + 1] = names[i + 1], names[i]
    return "".join(f'<div class="blk b-{n}">{b[n]}</div>' for n in names)


REST = ["table", "totals", "body", "notes", "sign"]


def _stack(s: Sheet, b) -> str:
    return f'<div class="blk">{b.get("head", "")}</div>' + _ordered(s, ["parties", "meta", *REST], b)


def _split(s: Sheet, b) -> str:
    top = f'<div class="row"><div class="c1">{b.get("parties", "")}</div><div class="c2 boxed">{b.get("meta", "")}</div></div>'
    return f'<div class="blk">{b.get("head", "")}</div>{top}' + _ordered(s, REST, b)


def _ledger(s: Sheet, b) -> str:
    top = f'<div class="row"><div class="c1">{b.get("head", "")}</div><div class="c2 r">{b.get("meta", "")}</div></div>'
    return top + _ordered(s, ["table", "totals", "parties", "body", "notes", "sign"], b)


def _cards(s: Sheet, b) -> str:
    names = [n for n in ("parties", "meta", "totals", "notes") if n in b]
    grid = "".join(f'<div class="card">{b[n]}</div>' for n in names)
    return f'<div class="blk ctr">{b.get("head", "")}</div><div class="cards">{grid}</div>' + _ordered(
        s, ["table", "body", "sign"], b
    )


def _centered(s: Sheet, b) -> str:
    return (
        '<div class="ctr">'
        + f'<div class="blk">{b.get("head", "")}</div>'
        + _ordered(s, ["parties", "meta", *REST], b)
        + "</div>"
    )


def _framed(s: Sheet, b) -> str:
    inner = "<hr>".join(f'<div class="blk">{b[n]}</div>' for n in ("head", "parties", "meta", *REST) if n in b)
    return f'<div class="frame">{inner}</div>'


def _banner(s: Sheet, b) -> str:
    """Title on a thin rule at the bottom of a tall white header, meta in a strip of boxes underneath."""
    return f'<div class="tall">{b.get("head", "")}</div><div class="strip">{b.get("meta", "")}</div>' + _ordered(
        s, ["parties", *REST], b
    )


def _memo(s: Sheet, b) -> str:
    return f'<div class="blk memo">{b.get("head", "")}{b.get("meta", "")}</div><hr>' + _ordered(
        s, ["parties", *REST], b
    )


def _sidebar(s: Sheet, b) -> str:
    """A narrow shaded rail on the left holding the head, the parties and the details; the rest beside it."""
    rail = "".join(f'<div class="blk">{b[n]}</div>' for n in ("head", "parties", "meta") if n in b)
    return f'<div class="rail"><div class="side">{rail}</div><div class="main">{_ordered(s, REST, b)}</div></div>'


def _rightrail(s: Sheet, b) -> str:
    """The head across the top, the body on the left and the details in a ruled column on the right."""
    side = "".join(f'<div class="blk">{b[n]}</div>' for n in ("meta", "totals", "notes") if n in b)
    main = _ordered(s, ["parties", "table", "body", "sign"], b)
    return f'<div class="blk">{b.get("head", "")}</div><div class="rrail"><div class="main">{main}</div><div class="side">{side}</div></div>'


def _footmeta(s: Sheet, b) -> str:
    """The details last, in a small ruled block at the foot of the page (reference lines under the signature)."""
    return (
        f'<div class="blk">{b.get("head", "")}</div>'
        + _ordered(s, ["parties", *REST], b)
        + f'<div class="footmeta">{b.get("meta", "")}</div>'
    )


def _inline(s: Sheet, b) -> str:
    """The details run in on one or two lines (label: value · label: value) under the head."""
    return f'<div class="blk">{b.get("head", "")}</div><div class="inl">{b.get("meta", "")}</div>' + _ordered(
        s, ["parties", *REST], b
    )


def _hero(s: Sheet, b) -> str:
    """A dark band carrying the head in light type, then the parties and details side by side in two panels."""
    panels = "".join(f'<div class="panel">{b[n]}</div>' for n in ("parties", "meta") if n in b)
    return f'<div class="hero">{b.get("head", "")}</div><div class="panels">{panels}</div>' + _ordered(s, REST, b)


ARRANGE = {
    "sidebar": _sidebar,
    "rightrail": _rightrail,
    "footmeta": _footmeta,
    "inline": _inline,
    "hero": _hero,
    "stack": _stack,
    "split": _split,
    "ledger": _ledger,
    "cards": _cards,
    "centered": _centered,
    "framed": _framed,
    "banner": _banner,
    "memo": _memo,
}

CSS = """
@page { size: A4; margin: 0; }
* { box-sizing: border-box; }
html, body { margin: 0; padding: 0; }
section.doc { width: 210mm; height: 296mm; overflow: hidden; position: relative; break-after: page;
  line-height: 1.32; color: #1b1b1b; }
section.doc h1, section.doc h2, section.doc h3 { font-family: var(--hf); color: var(--acc); margin: 0 0 5px 0; }
section.doc h1 { font-size: 1.75em; } section.doc h2 { font-size: 1.3em; } section.doc h3 { font-size: 1.08em; }
.blk { margin: 0 0 11px 0; }
.row { display: flex; gap: 26px; margin-bottom: 12px; } .row .c1 { flex: 1.3; } .row .c2 { flex: 1; }
.c2.r { text-align: right; } .boxed { border: 1px solid #999; padding: 6px 9px; }
.kvt { border-collapse: collapse; } .kvt th { font-weight: 600; padding: 1px 12px 1px 0; color: #444; }
.kvt td { padding: 1px 0; }
.kva { display: flex; flex-wrap: wrap; gap: 6px 24px; } .kl { font-size: 0.8em; color: #555; }
.kvv { font-weight: 600; }
.kvb { display: grid; grid-template-columns: repeat(3, 1fr); border-top: 1px solid #777; border-left: 1px solid #777; }
.kvb > div { border-right: 1px solid #777; border-bottom: 1px solid #777; padding: 3px 6px; }
.kvc > div { margin: 1px 0; }
table.dt { width: 100%; border-collapse: collapse; margin: 6px 0; }
table.dt th, table.dt td { padding: 3px 6px; text-align: left; } table.dt .n { text-align: right; }
table.dt th { color: var(--acc); }
.r-grid th, .r-grid td { border: 1px solid #888; } .r-rows th { border-bottom: 2px solid var(--acc); }
.r-rows td { border-bottom: 1px solid #ccc; } .r-zebra th { background: var(--acc); color: #fff; }
.r-zebra tbody tr:nth-child(even) td { background: #edf0f3; } .r-none th { border-bottom: 1px solid #aaa; }
tr.ft td { font-weight: 700; border-top: 2px solid #555; }
.addr { margin: 4px 0; }
.ctr { text-align: center; } .ctr table.dt, .ctr .kvt { margin-left: auto; margin-right: auto; }
.cards { display: grid; grid-template-columns: 1fr 1fr; gap: 10px; margin-bottom: 12px; }
.card { border: 1px solid #bbb; border-radius: 6px; padding: 7px 10px; }
.frame { border: 2.5px double #444; padding: 10px 14px; } .frame hr { border: 0; border-top: 1px solid #999; }
.tall { padding-top: 14mm; border-bottom: 1.5px solid var(--acc); margin-bottom: 8px; }
.strip .kvt, .strip .kvc, .strip .kva, .strip .kvb { margin: 4px 0 12px 0; }
.memo h1 { letter-spacing: 0.12em; }
.cols2 .b-body { column-count: 2; column-gap: 9mm; }
.hd { font-size: 0.8em; color: #666; border-bottom: 1px solid #ccc; margin-bottom: 9px; padding-bottom: 2px; }
.fo { position: absolute; bottom: 9mm; left: 0; right: 0; text-align: center; font-size: 0.78em; color: #666; }
.stamp { position: absolute; transform: rotate(-14deg); border: 3px solid #b22; color: #b22; font-weight: 700;
  font-size: 1.6em; padding: 2px 12px; opacity: 0.75; letter-spacing: 0.1em; }
.sig { margin-top: 22px; } .small { font-size: 0.85em; color: #444; }
p { margin: 0 0 7px 0; }
.rail { display: flex; gap: 14px; } .rail .side { flex: 0 0 33%; background: #f1f1ee; padding: 8px 9px;
  font-size: 0.92em; } .rail .main { flex: 1; min-width: 0; }
.rrail { display: flex; gap: 18px; } .rrail .main { flex: 1; min-width: 0; }
.rrail .side { flex: 0 0 34%; border-left: 2px solid var(--acc); padding-left: 10px; }
.footmeta { border-top: 1px solid #999; margin-top: 14px; padding-top: 4px; font-size: 0.86em; }
.inl .kvt, .inl .kvt tbody, .inl .kvt tr { display: inline; } .inl .kvt th, .inl .kvt td { display: inline; }
.inl .kvt tr::after, .inl .kvc > div::after, .inl .kva > div::after { content: "  \\00b7  "; color: #888; }
.inl .kvc > div { display: inline; } .inl .kva { display: block; } .inl .kva > div { display: inline; }
.inl .kva .kl, .inl .kva .kvv { display: inline; margin-right: 4px; }
.inl { margin-bottom: 12px; font-size: 0.93em; }
.hero { background: #2b2f36; color: #f4f4f4; padding: 10px 14px; margin: 0 0 10px 0; }
section.doc .hero h1, section.doc .hero h2, section.doc .hero h3 { color: #fff; } .hero .small { color: #ddd; }
.panels { display: grid; grid-template-columns: 1fr 1fr; gap: 0; border: 1px solid #aaa; margin-bottom: 12px; }
.panel { padding: 6px 10px; } .panel + .panel { border-left: 1px solid #aaa; }
"""
