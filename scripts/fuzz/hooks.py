"""Schemathesis checks: every error answer is in Countersign's JSON error shape, and a plain user
never gets past an admin-only operation."""
import os

import schemathesis


@schemathesis.check
def json_error_shape(ctx, response, case):
    if response.status_code < 400:
        return None
    content_type = response.headers.get("content-type", [""])
    content_type = content_type[0] if isinstance(content_type, list) else content_type
    assert content_type.startswith("application/json"), f"{response.status_code} answered with {content_type!r}, not JSON"
    body = response.json()
    error = body.get("error") if isinstance(body, dict) else None
    assert isinstance(error, dict), f"no error object in {body!r}"
    assert isinstance(error.get("code"), str) and isinstance(error.get("message"), str), f"error without code/message: {body!r}"
    return None


@schemathesis.check
def admin_only_refuses_users(ctx, response, case):
    """With FUZZ_AS=user, an operation marked `x-admin-only` must refuse: 403 (401 when the fuzzer
    broke the credentials; 400 when the request is malformed before any route sees it, e.g. a NUL
    byte), whatever else the request says; never a validation error or data."""
    if os.environ.get("FUZZ_AS") != "user" or not case.operation.definition.raw.get("x-admin-only"):
        return None
    if case.method.upper() != case.operation.method.upper():
        return None  # another method on the same path: 405 is the right answer
    assert response.status_code in (400, 401, 403), f"a user got {response.status_code} from admin-only {case.operation.label}"
    return None
