"""moto's server mode, with the three changes the ECR credential refresher's tests need (moto 5.2.5).

Run by aws.ts as `<moto venv>/bin/python moto-launch.py -H 127.0.0.1 -p PORT`.

1. STS AssumeRoleWithWebIdentity / AssumeRoleWithSAML are unsigned calls in AWS; with IAM enforcement on, moto
   tries to authenticate them and fails with HTTP 500. They skip authentication here, as in AWS.
2. moto answers auth failures as XML whatever the protocol; ECR speaks awsJson1_1, whose clients cannot parse XML.
   For JSON-protocol requests (X-Amz-Target) the failure becomes {"__type", "message"} with ECR's error names.
3. GetAuthorizationToken returns a fixed password that expired in 2015. Here each call mints a new password
   `<account>-auth-token-<random>` valid for MOTO_ECR_TOKEN_TTL_SECONDS (default 43200, ECR's 12 h), and appends
   {"password", "expiresAt"} to the JSON-lines file MOTO_ECR_TOKEN_LOG, if set, so the test's registry can accept
   exactly the minted tokens.
"""
import json
import os
import secrets
from base64 import b64encode
from datetime import datetime, timedelta, timezone

from moto.core import authorization
from moto.core.exceptions import JsonRESTError
from moto.core.responses import ActionResult
from moto.ecr.responses import ECRResponse
from moto.server import main

UNSIGNED = {"AssumeRoleWithWebIdentity", "AssumeRoleWithSAML"}
JSON_ERROR_NAMES = {
    "AccessDenied": "AccessDeniedException",
    "InvalidClientTokenId": "UnrecognizedClientException",
    "SignatureDoesNotMatch": "InvalidSignatureException",
    "AuthFailure": "UnrecognizedClientException",
}

_authenticate = authorization.ActionAuthenticatorMixin._authenticate_and_authorize_action


def _authenticate_fixed(self, iam_request_cls, resource="*"):
    if self._get_action() in UNSIGNED:
        return
    try:
        _authenticate(self, iam_request_cls, resource)
    except JsonRESTError:
        raise
    except Exception as e:  # moto's _RESTError subclasses carry error_type, message and code
        if not self.headers.get("X-Amz-Target") or not hasattr(e, "error_type"):
            raise
        err = JsonRESTError(JSON_ERROR_NAMES.get(e.error_type, e.error_type), e.message)
        err.code = e.code
        raise err from e


authorization.ActionAuthenticatorMixin._authenticate_and_authorize_action = _authenticate_fixed


def _get_authorization_token(self):
    ttl = int(os.environ.get("MOTO_ECR_TOKEN_TTL_SECONDS", "43200"))
    registry_ids = self._get_param("registryIds") or [self.current_account]
    expires = datetime.now(timezone.utc) + timedelta(seconds=ttl)
    data = []
    for registry_id in registry_ids:
        password = f"{registry_id}-auth-token-{secrets.token_hex(12)}"
        log = os.environ.get("MOTO_ECR_TOKEN_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"registryId": registry_id, "password": password, "expiresAt": expires.isoformat()}) + "\n")
        data.append(
            {
                "authorizationToken": b64encode(f"AWS:{password}".encode("ascii")).decode(),
                "expiresAt": expires,
                "proxyEndpoint": f"https://{registry_id}.dkr.ecr.{self.region}.amazonaws.com",
            }
        )
    return ActionResult({"authorizationData": data})


ECRResponse.get_authorization_token = _get_authorization_token

if __name__ == "__main__":
    main()
