"""IAM fixtures for the ECR credential refresher's tests, created in moto while IAM enforcement is still off.

Run by aws.ts as `<moto venv>/bin/python moto-fixtures.py ENDPOINT POLICY_JSON`; prints one JSON object:
users `refresher` (the policy attached) and `noperm` (nothing attached) with access keys, roles `aicr-operator`
(the policy) and `aicr-noperm` (nothing), and assumed-role session credentials for both roles (what an EKS Pod
Identity agent hands out).
"""
import json
import sys

import boto3

endpoint, policy_document = sys.argv[1], sys.argv[2]
kw = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="fixtures", aws_secret_access_key="fixtures")
iam = boto3.client("iam", **kw)
sts = boto3.client("sts", **kw)

policy = iam.create_policy(PolicyName="aicr-operator-ecr", PolicyDocument=policy_document)["Policy"]["Arn"]
trust = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"Service": "pods.eks.amazonaws.com"}, "Action": ["sts:AssumeRole", "sts:TagSession"]},
            {"Effect": "Allow", "Principal": {"Federated": "oidc"}, "Action": "sts:AssumeRoleWithWebIdentity"},
        ],
    }
)
out = {"policyArn": policy, "users": {}, "roles": {}, "sessions": {}}
for user, attach in (("refresher", True), ("noperm", False)):
    iam.create_user(UserName=user)
    if attach:
        iam.attach_user_policy(UserName=user, PolicyArn=policy)
    key = iam.create_access_key(UserName=user)["AccessKey"]
    out["users"][user] = {"accessKeyId": key["AccessKeyId"], "secretAccessKey": key["SecretAccessKey"]}
for role, attach in (("aicr-operator", True), ("aicr-noperm", False)):
    arn = iam.create_role(RoleName=role, AssumeRolePolicyDocument=trust)["Role"]["Arn"]
    if attach:
        iam.attach_role_policy(RoleName=role, PolicyArn=policy)
    out["roles"][role] = arn
    c = sts.assume_role(RoleArn=arn, RoleSessionName="pod-identity", DurationSeconds=43200)["Credentials"]
    out["sessions"][role] = {
        "accessKeyId": c["AccessKeyId"],
        "secretAccessKey": c["SecretAccessKey"],
        "sessionToken": c["SessionToken"],
        "expiration": c["Expiration"].isoformat(),
    }
print(json.dumps(out))
