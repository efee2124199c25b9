"""Secret and non-secret lines as they appear in notes, transcripts, tool results and .env files.

``SECRETS`` holds ``(line, secret, kind)``: after redaction ``secret`` must be gone and
``[REDACTED:kind]`` present. ``CLEAN`` holds lines that must come back unchanged. Other test
files reuse both for leak tests over every path into memory or a model.

Vendor-shaped values are built by concatenation and are fake (no valid checksums), so the
repository holds no literal that secret scanners flag.
"""

from __future__ import annotations

# Fake bodies: random-looking, not real credentials.
_B36 = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
_B40 = "Zq7Xr2Lk9Vm4Np8Ws3Ty6Bd1Hf5Gj0Cx2Ae7Ru"
_HEX40 = "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"
_AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
_AWS_SECRET_BARE = "Kx9/Qm2+Zt7wPv4Rn8Ls1Jd6Hb3Fy0Gc5Ta9Ue2W"
_AZURE_KEY = (
    "q8Zr3vXn2LpW9sTk4YhJ6mBd1Cf7Gx0Ae5Nu8Ro2Vs4Wt6Yk1Hp3Lq9Mz7Dn5Fb0Jc2Xg8Ks4Pr6Tw1Uy3Ve9Za=="
)

GITHUB_PAT = "gh" + "p_" + _B36
GITHUB_OAUTH = "gh" + "o_" + _B36
GITHUB_USER = "gh" + "u_" + _B36
GITHUB_APP = "gh" + "s_" + _B36
GITHUB_REFRESH = "gh" + "r_" + _B36
GITHUB_FINE = "github" + "_pat_" + "11ABCDEFG0aB3dE5fG7hJ9kL1mN3pQ5r_" + _B36[:30]
GITLAB = "gl" + "pat-" + "Xy7Zq2Lm9Nv4Bp8Ws3Td"
NPM = "np" + "m_" + _B36
HUGGINGFACE = "h" + "f_" + "QwErTyUiOpAsDfGhJkLzXcVbNmQwErTyUi"
SLACK_BOT = "xo" + "xb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"
SLACK_USER = (
    "xo" + "xp-" + "123456789012-123456789012-1234567890123-" + "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6"
)
SLACK_APP = "xa" + "pp-1-" + "A0123456789-1234567890123-" + "abcdef0123456789abcdef0123456789"
SLACK_HOOK_PATH = "T0" + "1ABCDEFGH/B0" + "1ABCDEFGH/" + "AbCdEfGhIjKlMnOpQrStUvWx"
STRIPE_LIVE = "sk" + "_live_" + "51H" + _B36[:30]
STRIPE_RESTRICTED = "rk" + "_live_" + "51H" + _B36[3:33]
STRIPE_TEST = "sk" + "_test_" + "51H" + _B36[6:36]
STRIPE_WEBHOOK = "wh" + "sec_" + _B36[:32]
ANTHROPIC = "sk-" + "ant-" + "api03-" + "Xq7Zr2Lk9Vm4Np8Ws3Ty6Bd1Hf5Gj0Cx2Ae7Ru-Ab12_Cd34EfGh"
OPENAI_LEGACY = "sk-" + "Zq7Xr2Lk9Vm4Np8Ws3Ty6Bd1T3" + "BlbkFJ" + "Hf5Gj0Cx2Ae7RuQw3Er"
OPENAI_PROJECT = "sk-" + "proj-" + "Zq7Xr2Lk9Vm4Np8Ws3Ty6Bd1_Hf5Gj0Cx2Ae7Ru-Qw3ErTy8Ui4Op"
GOOGLE_API = "AI" + "za" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
GOOGLE_OAUTH = "ya" + "29." + "a0AfH6SMBx7Zq2Lk9Vm4Np8Ws3Ty6Bd1Hf5Gj0"
PYPI = "py" + "pi-" + "AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTkwYWItY2RlZi0xMjM0LTU2Nzg5MGFiY2RlZgACKlszLCJ"
AWS_ACCESS = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SESSION_ID = "ASIA" + "Y34FZKBOKMUTVV7A"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM_BODY = (
    "MIIEowIBAAKCAQEAx7Zq2Lk9Vm4Np8Ws3Ty6Bd1Hf5Gj0Cx2Ae7RuQw3ErTy8Ui4Op\n"
    "b3Jk5Lm7Nn9Pq1Rs3Tu5Vw7Xy9Za1Bc3De5Fg7Hi9Jk1Lm3No5Pq7Rs9Tu1Vw3Xy5Z"
)
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "\n-----END RSA PRIVATE KEY-----"
OPENSSH = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDx7Zq2Lk9Vm4Np8Ws3Ty6Bd1Hf5Gj0Cx2Ae7RuQw3ErTy8Ui4OpAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----"
)

SECRETS: list[tuple[str, str, str]] = [
    # JSON and YAML keys
    ('{"username": "app", "password": "Tr0ub4dor&3"}', "Tr0ub4dor&3", "password"),
    ('{"passwd": "letmein"}', "letmein", "password"),
    (
        '  "api_key": "9f3Kx2LmQ8vB7nZ4cW1tR6yH0pD5sA2e",',
        "9f3Kx2LmQ8vB7nZ4cW1tR6yH0pD5sA2e",
        "json-secret",
    ),
    (
        'const cfg = { apiKey: "Qm7Zx2Vk9Lp4Nb8Wt3Rs6Hd" };',
        "Qm7Zx2Vk9Lp4Nb8Wt3Rs6Hd",
        "json-secret",
    ),
    (
        '{"client_id": "web", "client_secret": "c7Hk2Lm9Qp4Xz8Vb3Nt"}',
        "c7Hk2Lm9Qp4Xz8Vb3Nt",
        "json-secret",
    ),
    ("token: 4f9a1c7e2b8d6f3a0e5c9b7d", "4f9a1c7e2b8d6f3a0e5c9b7d", "json-secret"),
    ("  secret: Zr8Lq2Xv7Kp4Mn9Bt3Wc", "Zr8Lq2Xv7Kp4Mn9Bt3Wc", "json-secret"),
    (
        '{"access_token": "at-7Hq2Lm9Xz4Vb8Nt3Rs6Kd1Fp", "expires_in": 3600}',
        "at-7Hq2Lm9Xz4Vb8Nt3Rs6Kd1Fp",
        "json-secret",
    ),
    ('{"refresh_token": "rt.Qw8Er2Ty7Ui4Op9As3Df"}', "rt.Qw8Er2Ty7Ui4Op9As3Df", "json-secret"),
    (
        '{"private_key": "Zk3Lm8Qp2Xv7Nb4Wt9Rs1Hd6Fg0Jc5Ae"}',
        "Zk3Lm8Qp2Xv7Nb4Wt9Rs1Hd6Fg0Jc5Ae",
        "json-secret",
    ),
    ("db:\n  host: db.internal\n  password: letmein", "letmein", "password"),
    ('{\\"password\\": \\"s3cr3t-Value\\"}', "s3cr3t-Value", "password"),
    ("<password>Hunter2Hunter2</password>", "Hunter2Hunter2", "password"),
    # environment assignments
    ("PGPASSWORD=pg-Str0ng-Pass psql -h db.internal -U app", "pg-Str0ng-Pass", "password"),
    ("export DEPLOY_TOKEN=dt7Kq2Lm9Xz4Vb8Nt3Rs", "dt7Kq2Lm9Xz4Vb8Nt3Rs", "env-secret"),
    ('export SESSION_SECRET="Sx9Lq2Zv7Kp4Mn8Bt3Wc"', "Sx9Lq2Zv7Kp4Mn8Bt3Wc", "env-secret"),
    (
        "ENCRYPTION_KEY=7c2f9a4e1b8d3f6a0c5e9b2d7f4a1c8e",
        "7c2f9a4e1b8d3f6a0c5e9b2d7f4a1c8e",
        "env-secret",
    ),
    ("DB_PASSWORD='correct horse battery staple'", "correct horse battery staple", "password"),
    (
        "SECRET_KEY_BASE=a9f3c7e1b5d8f2a6c0e4b9d3f7a1c5e8",
        "a9f3c7e1b5d8f2a6c0e4b9d3f7a1c5e8",
        "env-secret",
    ),
    ("password = hunter2hunter", "hunter2hunter", "password"),
    ("DB_PASSWORD: 's3cr3t-value'", "s3cr3t-value", "password"),
    # credentials in URLs
    ("DATABASE_URL=postgres://app:pa55w0rd@db.internal:5432/ledger", "pa55w0rd", "url-credentials"),
    ("cache at redis://:r3dis-Pass@cache.internal:6379/0", "r3dis-Pass", "url-credentials"),
    (
        "git remote set-url origin https://deploy:Xk9Lq2Zv7@github.com/acme/api.git",
        "Xk9Lq2Zv7",
        "url-credentials",
    ),
    ("amqp://guest:p@ss-w0rd@mq.internal/vhost", "p@ss-w0rd", "url-credentials"),
    (
        "curl 'https://api.example.com/v1/items?access_token=Zq7Xr2Lk9Vm4Np8W'",
        "Zq7Xr2Lk9Vm4Np8W",
        "url-credentials",
    ),
    # vendor tokens
    ("export GITHUB_TOKEN=" + GITHUB_PAT, GITHUB_PAT, "github-token"),
    ("gh auth status shows " + GITHUB_OAUTH, GITHUB_OAUTH, "github-token"),
    ("user token " + GITHUB_USER + " (expires soon)", GITHUB_USER, "github-token"),
    (
        "https://x-access-token:" + GITHUB_APP + "@github.com/acme/api.git",
        GITHUB_APP,
        "github-token",
    ),
    ("refresh: " + GITHUB_REFRESH, GITHUB_REFRESH, "github-token"),
    ("fine-grained PAT " + GITHUB_FINE, GITHUB_FINE, "github-token"),
    ("CI_JOB uses " + GITLAB + " for the registry", GITLAB, "gitlab-token"),
    ("//registry.npmjs.org/:_authToken=" + NPM, NPM, "npm-token"),
    ("huggingface-cli login --token " + HUGGINGFACE, HUGGINGFACE, "huggingface-token"),
    ("SLACK_BOT_TOKEN=" + SLACK_BOT, SLACK_BOT, "slack-token"),
    ('{"ok": true, "access_token": "' + SLACK_USER + '"}', SLACK_USER, "slack-token"),
    ("socket mode app token " + SLACK_APP, SLACK_APP, "slack-token"),
    (
        "alerts go to https://hooks.slack.com/services/" + SLACK_HOOK_PATH,
        SLACK_HOOK_PATH,
        "slack-webhook",
    ),
    ("STRIPE_SECRET_KEY=" + STRIPE_LIVE, STRIPE_LIVE, "stripe-key"),
    ("restricted key for reports: " + STRIPE_RESTRICTED, STRIPE_RESTRICTED, "stripe-key"),
    ("stripe.api_key = '" + STRIPE_TEST + "'", STRIPE_TEST, "stripe-key"),
    ("webhook signing secret " + STRIPE_WEBHOOK, STRIPE_WEBHOOK, "stripe-key"),
    ("ANTHROPIC_API_KEY=" + ANTHROPIC, ANTHROPIC, "anthropic-key"),
    ("openai.api_key = " + OPENAI_LEGACY, OPENAI_LEGACY, "openai-key"),
    (
        '{"role": "user", "content": "my key is ' + OPENAI_PROJECT + '"}',
        OPENAI_PROJECT,
        "openai-key",
    ),
    ("maps key " + GOOGLE_API + " restricted to our referrer", GOOGLE_API, "google-api-key"),
    ("gcloud auth print-access-token -> " + GOOGLE_OAUTH, GOOGLE_OAUTH, "google-oauth-token"),
    ("[pypi]\n  username = __token__\n  password = " + PYPI, PYPI, "pypi-token"),
    # AWS
    ("aws_access_key_id = " + AWS_ACCESS, AWS_ACCESS, "aws-access-key"),
    (
        '{"Credentials": {"AccessKeyId": "' + AWS_SESSION_ID + '"}}',
        AWS_SESSION_ID,
        "aws-access-key",
    ),
    ("aws_secret_access_key = " + _AWS_SECRET, _AWS_SECRET, "aws-secret-key"),
    ('{"SecretAccessKey": "' + _AWS_SECRET + '"}', _AWS_SECRET, "aws-secret-key"),
    ("AWS creds for staging: " + AWS_ACCESS + " / " + _AWS_SECRET, _AWS_SECRET, "aws-secret-key"),
    (
        "the other half was " + _AWS_SECRET_BARE + " in the old vault",
        _AWS_SECRET_BARE,
        "aws-secret-key",
    ),
    # Azure
    (
        "DefaultEndpointsProtocol=https;AccountName=payrail;AccountKey="
        + _AZURE_KEY
        + ";EndpointSuffix=core.windows.net",
        _AZURE_KEY,
        "azure-account-key",
    ),
    (
        "Endpoint=sb://payrail.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey="
        + _B40
        + "=",
        _B40,
        "azure-account-key",
    ),
    (
        "BlobEndpoint=https://payrail.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02"
        "&ss=b&srt=co&sp=rl&se=2026-12-01T00:00:00Z&sig=Zq7Xr2Lk9Vm4Np8Ws3Ty6Bd1Hf5%3D",
        "Zq7Xr2Lk9Vm4Np8Ws3Ty6Bd1Hf5",
        "azure-sas",
    ),
    (
        "https://payrail.blob.core.windows.net/exports/x.csv?sv=2022-11-02&sp=r"
        "&sig=Qm8Zx2Vk9Lp4Nb7Wt3Rs%2B6Hd%3D",
        "Qm8Zx2Vk9Lp4Nb7Wt3Rs",
        "azure-sas",
    ),
    # headers
    ("Authorization: Basic YWRtaW46czNjcjN0LXBhc3M=", "YWRtaW46czNjcjN0LXBhc3M=", "basic-auth"),
    (
        '-H "Authorization: Bearer 7Hq2Lm9Xz4Vb8Nt3Rs6Kd1Fp"',
        "7Hq2Lm9Xz4Vb8Nt3Rs6Kd1Fp",
        "bearer-token",
    ),
    ("Authorization: Token " + _HEX40, _HEX40, "bearer-token"),
    ("curl -u admin:Adm1n-Pass https://ci.internal/api/json", "Adm1n-Pass", "basic-auth"),
    # blocks and structured tokens
    ("deploy key:\n" + PEM + "\nkeep it in the vault", PEM_BODY, "private-key"),
    (OPENSSH, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", "private-key"),
    ('{"private_key": "' + PEM.replace("\n", "\\n") + '"}', PEM_BODY.split("\n")[0], "private-key"),
    ("session cookie was " + JWT, JWT, "jwt"),
    # prose and command lines
    (
        "the staging DB password is hunter2-payrail-stg if you need it",
        "hunter2-payrail-stg",
        "password",
    ),
    ("Password: Summer2026!", "Summer2026!", "password"),
    ("mysql -u root -pS3cr3t-Root -h db.internal ledger", "S3cr3t-Root", "password"),
    ("docker login -u ci -p Ci-Pass-2026 registry.internal", "Ci-Pass-2026", "password"),
    ("psql --password=Pg-Pass-99 -h db.internal", "Pg-Pass-99", "password"),
    (
        "vault login --token hvs.CAESIJx7Zq2Lk9Vm4Np8Ws3Ty6Bd1",
        "hvs.CAESIJx7Zq2Lk9Vm4Np8Ws3Ty6Bd1",
        "cli-secret",
    ),
    ("- **DB password**: `Pa55-word!`", "Pa55-word!", "password"),
    ("The root password for the staging box is Tr0ub4dor&3 now", "Tr0ub4dor&3", "password"),
    ('use password "hunter2x" for the old box', "hunter2x", "password"),
    (
        "machine api.heroku.com login me@example.com password 01234abcd-ef9",
        "01234abcd-ef9",
        "password",
    ),
    ("my API key is 9f3Kx2LmQ8vB7nZ4cW1tR6y, please keep it", "9f3Kx2LmQ8vB7nZ4cW1tR6y", "secret"),
    (
        "Set-Cookie: sessionid=Zq7Xr2Lk9Vm4Np8Ws3Ty6Bd1; Path=/; HttpOnly",
        "Zq7Xr2Lk9Vm4Np8Ws3Ty6Bd1",
        "cookie",
    ),
    ("redis-cli -h cache.internal -a S3cret-Redis-Pass ping", "S3cret-Redis-Pass", "password"),
    (
        "SENDGRID_API_KEY=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",
        "Zq7Xr2Lk9Vm4Np8Ws3Ty6B.d1Hf5Gj0Cx2Ae7RuQw3ErTy8Ui4OpAsDfGhJkLzXcVb",
        "env-secret",
    ),
]

CLEAN: list[str] = [
    "Rotate the password monthly.",
    "The password policy requires 12 characters.",
    "the token is expired",
    "daily_token_budget = 200000",
    "auth is handled by nginx",
    "We use Postgres 16.",
    "Deployed api v1.4.2 to staging on port 8443.",
    "commit 3f2a9c1d4e5b6a7f8e9d0c1b2a3f4e5d6c7b8a9f fixed the retry loop",
    "session 5b7c2e0a-8d41-4c1e-9f3a-2d6b1a9e7c55 was reviewed",
    "See memory/2026-11-20.md and docs/ops/rotation.md for details.",
    "- Secrets live in AWS Secrets Manager under `payrail/<env>/...`, never in the repo.",
    "Helm: `values-staging.yaml` sets it from the secret `payrail/staging/idem-redis-url`.",
    "password: required",
    "Password: see 1Password, vault Ops",
    "token: ${GITHUB_TOKEN}",
    "api_key: <your-api-key>",
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "DB_PASSWORD=${DB_PASSWORD}",
    'password = os.environ["DB_PASSWORD"]',
    "token = get_token()",
    "def login(user: str, password: str | None = None) -> Session:",
    "max_tokens: 4096",
    'eos_token: "</s>"',
    'pad_token = "[PAD]"',
    "secret_name: payrail-db",
    "secret: payrail/prod/adyen-hmac",
    "PORT=8080",
    "NODE_ENV=production",
    "redis://cache.internal:6379/0",
    "https://github.com/acme/api/pull/42",
    "ssh git@github.com:acme/api.git",
    "Bearer tokens expire after one hour.",
    "Authorization: Bearer <token>",
    "| password | string | required |",
    "## Password rotation",
    "The `--password` flag is deprecated; use `--password-file`.",
    "sort_key: created_at",
    "idempotency_key = 5b7c2e0a-8d41-4c1e-9f3a-2d6b1a9e7c55",
    "PASSWORD_FILE=/run/secrets/db_password",
    "token_ttl: 3600",
    "Use sk-learn for the baseline and ghp tokens for CI.",
    "Files start with -----BEGIN OPENSSH PRIVATE KEY----- and are 0600.",
    "KMS_KEY=arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    "SSH_KEY=~/.ssh/id_ed25519",
    "the secret is rotated every 90 days",
    "- [x] rotate the Stripe key (done 2026-11-20)",
    "passwords: never in the repo",
    "password reset emails go through SES",
    "uuid 123e4567-e89b-12d3-a456-426614174000 in the request log",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 of the empty file",
    "python -m pytest tests/test_redact.py -q",
    "**Note:** the key is in Vault, not here.",
    "token = token.strip()",
    "api_key = settings.API_KEY",
    "secret_key = SECRET_KEY",
    "if password == confirm:",
    "the password for the admin user is stored in Vault",
    "The password of the root account is rotated weekly.",
    "the api key is in vault, ask ops",
    'Password "required" flag was removed',
    "Cookie: theme=dark; lang=en",
    "token: next_marker",
    "the access token for CI expires in 3600 seconds",
]
