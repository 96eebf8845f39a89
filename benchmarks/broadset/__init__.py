"""Rendered documents of the broad question set: layouts by document type, each a function of a seeded
:class:`~broadset.common.Ctx` that returns the page's HTML and the questions whose answers it printed."""

from __future__ import annotations

from collections.abc import Callable

from . import academic, commerce, office, reports
from .common import Ctx, Document, Question

#: layout name -> (document type, function building one document)
LAYOUTS: dict[str, tuple[str, Callable[[Ctx], Document]]] = {
    "invoice-classic": ("invoice", commerce.invoice_classic),
    "invoice-band": ("invoice", commerce.invoice_modern),
    "receipt-till": ("receipt", commerce.receipt_till),
    "receipt-cafe": ("receipt", commerce.receipt_cafe),
    "statement-account": ("bank_statement", commerce.statement_bank),
    "statement-card": ("bank_statement", commerce.statement_card),
    "letter-block": ("letter", office.letter_block),
    "letter-sidebar": ("letter", office.letter_modern),
    "form-application": ("form", office.form_application),
    "form-registration": ("form", office.form_registration),
    "minutes-team": ("minutes", office.minutes_meeting),
    "minutes-agm": ("minutes", office.minutes_board),
    "schedule-programme": ("schedule", academic.schedule_conference),
    "schedule-timetable": ("schedule", academic.schedule_timetable),
    "schedule-calendar": ("schedule", academic.calendar_month),
    "exam-cover": ("exam", academic.exam_cover),
    "exam-grid": ("exam", academic.exam_grid),
    "paper-twocol": ("paper", academic.paper_twocol),
    "paper-blocks": ("paper", academic.paper_blocks),
    "slides-light": ("slides", academic.slides_light),
    "slides-dark": ("slides", academic.slides_dark),
    "report-bars": ("report", reports.report_chart),
    "report-dashboard": ("report", reports.report_kpi),
}

__all__ = ["LAYOUTS", "Ctx", "Document", "Question"]
