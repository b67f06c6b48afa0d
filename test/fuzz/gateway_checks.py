"""Schemathesis checks of the gateway's own rules (loaded with SCHEMATHESIS_HOOKS).

Independent of the OpenAPI document, so a wrong document cannot hide a wrong
answer: every response carries x-gateway-trace, no response is a 5xx, and
every error body is in the shape of the endpoint family that was called
(spec 1 section 7), worked out from the path as gateway/errors/shapes.ts does.
"""
import json
import re

import schemathesis

GOOGLE_METHOD = re.compile(r"^/v1/models/[^/]+:(generateContent|streamGenerateContent|countTokens|embedContent|batchEmbedContents|batchGenerateContent)$")


def _header(response, name):
    value = response.headers.get(name) or response.headers.get(name.lower())
    if isinstance(value, list):
        value = value[0] if value else None
    return value


def _path(case):
    path = case.formatted_path if hasattr(case, "formatted_path") else case.path
    return path.split("?", 1)[0]


def family(method, path):
    if path == "/v1/messages" or path.startswith("/v1/messages/"):
        return "anthropic"
    if path == "/v1beta" or path.startswith("/v1beta/") or GOOGLE_METHOD.match(path):
        return "gemini"
    if path == "/mcp":
        return "mcp"
    if path == "/api/v1/integrations/dify/retrieval" and method == "POST":
        return "dify"
    return "openai"


def shape_problem(kind, body):
    """None when `body` is an error of this family's shape, else what is wrong."""
    if not isinstance(body, dict):
        return "the body is not a JSON object"
    if kind == "anthropic":
        err = body.get("error")
        if body.get("type") != "error" or not isinstance(err, dict):
            return "not {type: 'error', error: {...}}"
        if not isinstance(err.get("type"), str) or not isinstance(err.get("message"), str):
            return "error.type and error.message must be strings"
        if "code" in err:
            return "the Anthropic shape has no code"
        return None
    if kind == "gemini":
        err = body.get("error")
        if not isinstance(err, dict):
            return "no error object"
        if not isinstance(err.get("code"), int) or not isinstance(err.get("message"), str) or not isinstance(err.get("status"), str):
            return "not {error: {code: number, message, status}}"
        return None
    if kind == "dify":
        if not isinstance(body.get("error_code"), int) or not isinstance(body.get("error_msg"), str):
            return "not {error_code: number, error_msg}"
        return None
    if kind == "mcp":
        err = body.get("error")
        if body.get("jsonrpc") != "2.0" or not isinstance(err, dict) or not isinstance(err.get("code"), int):
            return "not a JSON-RPC 2.0 error"
        return None
    err = body.get("error")
    if not isinstance(err, dict):
        return "no error object"
    if not isinstance(err.get("message"), str) or not isinstance(err.get("type"), str):
        return "error.message and error.type must be strings"
    if "code" not in err or not (err["code"] is None or isinstance(err["code"], str)):
        return "error.code must be a string (OpenAI shape)"
    return None


@schemathesis.check
def gateway_trace_header(ctx, response, case):
    trace = _header(response, "x-gateway-trace")
    if not trace:
        raise AssertionError(f"{case.method} {_path(case)} answered {response.status_code} without x-gateway-trace")


def no_channel_available(response):
    """Spec 1 section 4.10: a model that exists but has no channel on this endpoint is 503 no_channel_available.

    The one 5xx the spec prescribes for a client's request (e.g. an image model sent to chat), in each shape.
    """
    if response.status_code != 503:
        return False
    try:
        body = json.loads(response.text)
    except ValueError:
        return False
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict):
        return False
    return err.get("code") == "no_channel_available" or (
        isinstance(err.get("message"), str) and err["message"].startswith("No channel is available for model")
    )


@schemathesis.check
def gateway_no_server_error(ctx, response, case):
    if response.status_code >= 500 and not no_channel_available(response):
        raise AssertionError(f"{case.method} {_path(case)} answered {response.status_code}: {response.text[:300]}")


@schemathesis.check
def gateway_error_shape(ctx, response, case):
    if response.status_code < 400:
        return
    path = _path(case)
    kind = family(case.method.upper(), path)
    try:
        body = json.loads(response.text)
    except ValueError:
        raise AssertionError(f"{case.method} {path} answered {response.status_code} with a body that is not JSON: {response.text[:200]!r}")
    problem = shape_problem(kind, body)
    if problem:
        raise AssertionError(f"{case.method} {path} answered {response.status_code} outside the {kind} error shape ({problem}): {response.text[:300]}")
