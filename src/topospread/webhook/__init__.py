"""``topospread webhook``: a ValidatingAdmissionWebhook with lint's findings (an edge layer).

:mod:`~topospread.webhook.review` turns one AdmissionReview into a decision with
:func:`topospread.engine.audit.lint`; :mod:`~topospread.webhook.server` serves it over TLS
with the standard library, within a deadline, failing open or closed as configured.
"""

from topospread.webhook.review import (
    ADMISSION_API_VERSION,
    AdmissionRequest,
    Policy,
    ReviewError,
    Verdict,
    decide,
    fail_verdict,
    finding_text,
    parse_review,
    response,
)
from topospread.webhook.server import REVIEW_PATH, TLSFiles, WebhookServer

__all__ = [
    "ADMISSION_API_VERSION",
    "REVIEW_PATH",
    "AdmissionRequest",
    "Policy",
    "ReviewError",
    "TLSFiles",
    "Verdict",
    "WebhookServer",
    "decide",
    "fail_verdict",
    "finding_text",
    "parse_review",
    "response",
]
