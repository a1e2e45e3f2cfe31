/**
 * Test helpers: redactors built from real settings, and fake credentials in
 * the exact shapes the vendors issue. None of these values is a live secret.
 */
import type { ExtraPattern } from "../../src/config/types.ts";
import { createRedactor, type Redactor } from "../../src/redact/mod.ts";

export interface RedactorOptions {
  enabled?: boolean;
  entropyFallback?: boolean;
  extraPatterns?: readonly ExtraPattern[];
}

/** A redactor with the policy defaults (enabled, entropy off, no operator patterns). */
export function makeRedactor(options: RedactorOptions = {}): Redactor {
  return createRedactor({
    enabled: options.enabled ?? true,
    entropyFallback: options.entropyFallback ?? false,
    extraPatterns: options.extraPatterns ?? [],
  });
}

/** Deterministic base62 filler, so fixtures have the length and alphabet of real keys. */
export function base62(length: number, seed = 7): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let out = "";
  let x = seed;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += alphabet[x % 62];
  }
  return out;
}

export const FAKE = {
  awsAccessKeyId: "AKIAIOSFODNN7EXAMPLE",
  awsSessionKeyId: "ASIAY34FZKBOKMUTVV7A",
  awsSecretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  githubClassic: "ghp_" + base62(36, 1),
  githubOauth: "gho_" + base62(36, 2),
  githubFineGrained: "github_pat_11ABCDEFG0" + base62(22, 3) + "_" + base62(59, 4),
  gitlab: "glpat-" + base62(20, 5),
  slack: "xoxb-1234567890123-1234567890123-" + base62(24, 6),
  stripeLive: "sk_live_" + base62(24, 7),
  stripeRestricted: "rk_live_" + base62(24, 8),
  stripeTest: "sk_test_" + base62(24, 9),
  openaiLegacy: "sk-" + base62(48, 10),
  openaiProject: "sk-proj-" + base62(40, 11) + "_" + base62(40, 12) + "-" + base62(20, 13),
  anthropic: "sk-ant-api03-" + base62(86, 14) + "-" + base62(6, 15) + "AA",
  google: "AIza" + base62(35, 16),
  npm: "npm_" + base62(36, 17),
  pypi: "pypi-AgEIcHlwaS5vcmc" + base62(70, 18),
  jwt: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" +
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ" +
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
  azureKey: base62(86, 19) + "==",
  highEntropy: "Zq8vT3mX9pL2nK7wR4yB6cD1fG5hJ0sA",
} as const;

/** A multi-line PKCS#1 key body (not a real key: base64 of filler). */
export const PEM_BODY = [
  "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
  "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
  "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo",
];

export function pemBlock(label = "RSA PRIVATE KEY", eol = "\n"): string {
  return [`-----BEGIN ${label}-----`, ...PEM_BODY, `-----END ${label}-----`].join(eol);
}
