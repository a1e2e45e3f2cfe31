/**
 * One positive case per built-in detector: the secret is replaced by
 * `[REDACTED:<kind>]` and the text around it is kept byte for byte.
 */
import assert from "node:assert/strict";
import { FAKE, makeRedactor, pemBlock } from "./_redactor.ts";

const redactor = makeRedactor();

interface Case {
  name: string;
  input: string;
  expected: string;
}

const m = (kind: string) => `[REDACTED:${kind}]`;

const CASES: readonly Case[] = [
  {
    name: "an AWS access key id (AKIA)",
    input: `aws_access_key_id = ${FAKE.awsAccessKeyId}\n`,
    expected: `aws_access_key_id = ${m("aws_access_key_id")}\n`,
  },
  {
    name: "an AWS temporary access key id (ASIA) in JSON",
    input: `{"AccessKeyId": "${FAKE.awsSessionKeyId}"}`,
    expected: `{"AccessKeyId": "${m("aws_access_key_id")}"}`,
  },
  {
    name: "an AWS secret access key after its key name",
    input: `aws_secret_access_key = ${FAKE.awsSecretAccessKey}\n`,
    expected: `aws_secret_access_key = ${m("aws_secret_access_key")}\n`,
  },
  {
    name: "an AWS secret access key in `aws sts` JSON output",
    input: `"SecretAccessKey": "${FAKE.awsSecretAccessKey}",`,
    expected: `"SecretAccessKey": "${m("aws_secret_access_key")}",`,
  },
  {
    name: "a classic GitHub token (ghp_)",
    input: `remote: using ${FAKE.githubClassic} now`,
    expected: `remote: using ${m("github_token")} now`,
  },
  {
    name: "a GitHub OAuth token (gho_) in a URL",
    input: `https://${FAKE.githubOauth}@github.com/org/repo.git`,
    expected: `https://${m("github_token")}@github.com/org/repo.git`,
  },
  {
    name: "a fine-grained GitHub token (github_pat_)",
    input: `token: "${FAKE.githubFineGrained}"`,
    expected: `token: "${m("github_token")}"`,
  },
  {
    name: "a GitLab personal access token (glpat-)",
    input: `PRIVATE-TOKEN ${FAKE.gitlab}`,
    expected: `PRIVATE-TOKEN ${m("gitlab_token")}`,
  },
  {
    name: "a Slack bot token (xoxb-)",
    input: `slack: ${FAKE.slack}.`,
    expected: `slack: ${m("slack_token")}.`,
  },
  {
    name: "a Stripe live secret key (sk_live_)",
    input: `stripe ${FAKE.stripeLive}`,
    expected: `stripe ${m("stripe_key")}`,
  },
  {
    name: "a Stripe restricted key (rk_live_)",
    input: `(${FAKE.stripeRestricted})`,
    expected: `(${m("stripe_key")})`,
  },
  {
    name: "a Stripe test secret key (sk_test_)",
    input: `${FAKE.stripeTest}`,
    expected: `${m("stripe_key")}`,
  },
  {
    name: "a legacy OpenAI key (sk-)",
    input: `openai ${FAKE.openaiLegacy} ok`,
    expected: `openai ${m("openai_key")} ok`,
  },
  {
    name: "an OpenAI project key (sk-proj-)",
    input: `[${FAKE.openaiProject}]`,
    expected: `[${m("openai_key")}]`,
  },
  {
    name: "an Anthropic key (sk-ant-), named as Anthropic rather than generic sk-",
    input: `x ${FAKE.anthropic} y`,
    expected: `x ${m("anthropic_key")} y`,
  },
  {
    name: "a Google API key (AIza)",
    input: `maps?key=${FAKE.google}&v=3`,
    expected: `maps?key=${m("google_api_key")}&v=3`,
  },
  {
    name: "an npm token (npm_) in .npmrc",
    input: `//registry.npmjs.org/:_authToken=${FAKE.npm}\n`,
    expected: `//registry.npmjs.org/:_authToken=${m("npm_token")}\n`,
  },
  {
    name: "a PyPI token (pypi-)",
    input: `password = ${FAKE.pypi}`,
    expected: `password = ${m("pypi_token")}`,
  },
  {
    name: "a JWT",
    input: `id_token ${FAKE.jwt}\n`,
    expected: `id_token ${m("jwt")}\n`,
  },
  {
    name: "a JWT with an empty signature (alg none)",
    input: `t=${FAKE.jwt.slice(0, FAKE.jwt.lastIndexOf(".") + 1)} end`,
    expected: `t=${m("jwt")} end`,
  },
  {
    name: "a PEM private-key block over several lines",
    input: `before\n${pemBlock()}\nafter\n`,
    expected: `before\n${m("private_key")}\nafter\n`,
  },
  {
    name: "an Authorization: Bearer header value (the scheme stays)",
    input: `> Authorization: Bearer abc.def-ghi_jkl\n`,
    expected: `> Authorization: Bearer ${m("authorization")}\n`,
  },
  {
    name: "an Authorization: Basic header value",
    input: `curl -H "Authorization: Basic dXNlcjpodW50ZXIy" https://x`,
    expected: `curl -H "Authorization: Basic ${m("authorization")}" https://x`,
  },
  {
    name: "a Proxy-Authorization header in JSON",
    input: `{"proxy-authorization": "Token 0123456789"}`,
    expected: `{"proxy-authorization": "Token ${m("authorization")}"}`,
  },
  {
    name: "a bearer token outside a header",
    input: `sending bearer 0123456789abcdefXYZ to api`,
    expected: `sending bearer ${m("authorization")} to api`,
  },
  {
    name: "a password in URL userinfo (user and host stay)",
    input: `DATABASE_URL=postgres://app:s3cr3t@db.internal:5432/app\n`,
    expected: `DATABASE_URL=postgres://app:${m("url_credentials")}@db.internal:5432/app\n`,
  },
  {
    name: "a URL password that itself contains @",
    input: `redis://:p@ss@cache:6379`,
    expected: `redis://:${m("url_credentials")}@cache:6379`,
  },
  {
    name: "an Azure storage AccountKey in a connection string",
    input:
      `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${FAKE.azureKey};EndpointSuffix=core.windows.net`,
    expected: `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${
      m("azure_account_key")
    };EndpointSuffix=core.windows.net`,
  },
  {
    name: "a KEY=value secret assignment (the key stays)",
    input: `DB_PASSWORD=hunter2\n`,
    expected: `DB_PASSWORD=${m("secret_assignment")}\n`,
  },
];

for (const c of CASES) {
  Deno.test(`redact() hides ${c.name}`, () => {
    assert.equal(redactor.redact(c.input), c.expected);
  });
}

Deno.test("redact() hides every secret in one text, each with its own marker", () => {
  const input = [
    `AWS_ACCESS_KEY_ID=${FAKE.awsAccessKeyId}`,
    `GITHUB_TOKEN=${FAKE.githubClassic}`,
    `url=https://u:pw@h/`,
  ].join("\n");
  assert.equal(
    redactor.redact(input),
    [
      `AWS_ACCESS_KEY_ID=${m("aws_access_key_id")}`,
      `GITHUB_TOKEN=${m("github_token")}`,
      `url=https://u:${m("url_credentials")}@h/`,
    ].join("\n"),
  );
});

Deno.test("redactWithSpans() reports where each marker sits and what it replaced", () => {
  const input = `a ${FAKE.awsAccessKeyId} b`;
  const result = redactor.redactWithSpans(input);
  assert.equal(result.text, `a ${m("aws_access_key_id")} b`);
  assert.deepEqual(result.spans, [{
    start: 2,
    end: 2 + FAKE.awsAccessKeyId.length,
    kind: "aws_access_key_id",
    outStart: 2,
    outEnd: 2 + m("aws_access_key_id").length,
  }]);
  assert.deepEqual(redactor.findSpans(input), [{
    start: 2,
    end: 22,
    kind: "aws_access_key_id",
  }]);
});

Deno.test("redact() keeps surrounding non-ASCII text and indices intact", () => {
  const input = `clé 🔑 ${FAKE.githubClassic} — ok ✓ password=hünter2 €`;
  assert.equal(
    redactor.redact(input),
    `clé 🔑 ${m("github_token")} — ok ✓ password=${m("secret_assignment")} €`,
  );
});

Deno.test("redact() copes with lone surrogates (decoded garbage) without losing its place", () => {
  const input = `\uD800 x ${FAKE.npm} \uDC00\uD83D token=abc \uDFFF`;
  assert.equal(
    redactor.redact(input),
    `\uD800 x ${m("npm_token")} \uDC00\uD83D token=${m("secret_assignment")} \uDFFF`,
  );
});

Deno.test("redact() can be passed around unbound, as the audit log does", () => {
  const { redact } = redactor;
  assert.equal(redact(`x ${FAKE.npm}`), `x ${m("npm_token")}`);
});
