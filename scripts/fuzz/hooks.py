"""Schemathesis hooks: every error answer must be in Countersign's JSON error shape."""
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
