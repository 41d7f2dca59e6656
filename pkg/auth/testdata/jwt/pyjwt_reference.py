import json, sys, datetime as dt
from unittest import mock
from cryptography.hazmat.primitives.asymmetric import rsa, ec, ed25519
from cryptography.hazmat.primitives import serialization as ser
from airbyte_cdk.sources.declarative.parsers.model_to_component_factory import ModelToComponentFactory
from airbyte_cdk.sources.declarative.models.declarative_component_schema import JwtAuthenticator as M
import airbyte_cdk.sources.declarative.auth.jwt as jmod

out = sys.argv[1]
def pem(k, fmt):
    return k.private_bytes(ser.Encoding.PEM, fmt, ser.NoEncryption()).decode()
keys = {
  "rsa_pkcs1": pem(rsa.generate_private_key(65537, 2048), ser.PrivateFormat.TraditionalOpenSSL),
  "ec_p256": pem(ec.generate_private_key(ec.SECP256R1()), ser.PrivateFormat.TraditionalOpenSSL),
  "ec_p384": pem(ec.generate_private_key(ec.SECP384R1()), ser.PrivateFormat.PKCS8),
  "ec_p521": pem(ec.generate_private_key(ec.SECP521R1()), ser.PrivateFormat.PKCS8),
  "ed25519": pem(ed25519.Ed25519PrivateKey.generate(), ser.PrivateFormat.PKCS8),
}
keys["rsa_pkcs8"] = pem(ser.load_pem_private_key(keys["rsa_pkcs1"].encode(), None), ser.PrivateFormat.PKCS8)
NOW = 1767225600  # 2026-01-01T00:00:00Z
class FakeDT(dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return dt.datetime.fromtimestamp(NOW + 0.75)
config = {"secret": "s3cr3t-hmac-key", "iss": "svc@example.iam", "kid": "key-1", "aud": "123",
          "scope": "read write", "unicode": "caf\u00e9 \U0001F600", "n": 7, "flag": "True"}
cases = []
def case(name, keyname, defn):
    cfg = dict(config)
    if keyname:
        cfg["secret"] = keys[keyname]
    m = M.parse_obj(defn)
    a = ModelToComponentFactory().create_component(M, defn, cfg)
    with mock.patch.object(jmod, "datetime", FakeDT):
        tok = a.token
    cases.append({"name": name, "key": keyname or "", "definition": defn, "config": cfg, "now": NOW, "token": tok})
base = {"type": "JwtAuthenticator", "secret_key": "{{ config['secret'] }}"}
for alg in ["HS256", "HS384", "HS512"]:
    case(alg, None, {**base, "algorithm": alg})
case("HS256-full", None, {**base, "algorithm": "HS256", "token_duration": 3600, "header_prefix": "Bearer",
    "jwt_headers": {"kid": "{{ config['kid'] }}", "cty": "JWT"},
    "additional_jwt_headers": {"zeta": "1", "nested": {"b": 2, "a": [1, "x"]}, "Alpha": "{{ config['unicode'] }}"},
    "jwt_payload": {"iss": "{{ config['iss'] }}", "sub": "user", "aud": "{{ config['aud'] }}"},
    "additional_jwt_payload": {"scope": "{{ config['scope'] }}", "z": "{{ config['n'] }}", "a": "{{ config['flag'] }}",
                               "obj": {"y": 1.5, "x": None, "w": "caf\u00e9"}, "u": "{{ config['unicode'] }}", "empty": "", "list": "[1, 'two']"}})
case("HS512-base64-typ", None, {**base, "algorithm": "HS512", "base64_encode_secret_key": True, "token_duration": None,
    "jwt_headers": {"typ": "at+jwt"}})
for alg, k in [("RS256", "rsa_pkcs1"), ("RS384", "rsa_pkcs8"), ("RS512", "rsa_pkcs1"), ("PS256", "rsa_pkcs1"), ("PS384", "rsa_pkcs8"),
               ("PS512", "rsa_pkcs1"), ("ES256", "ec_p256"), ("ES384", "ec_p384"), ("ES512", "ec_p521"), ("EdDSA", "ed25519")]:
    case(alg, k, {**base, "algorithm": alg, "jwt_payload": {"iss": "{{ config['iss'] }}"}, "additional_jwt_payload": {"scope": "x"}})
json.dump({"keys": keys, "cases": cases}, open(out, "w"), indent=1, ensure_ascii=False)
print(len(cases), "cases")
