/**
 * The loaded, validated and frozen policy: the one object every layer reads.
 *
 * `src/config/load.ts` is the only producer. Everything here is already
 * resolved (absolute paths, compiled regexes, the child environment), so the
 * hot path of a call never touches the filesystem or the environment to
 * interpret the policy.
 *
 * @module
 */

/** How an allowlisted command name was resolved at startup. */
export interface ResolvedCommand {
  /** The name exactly as written in `[allowlist] commands`. */
  readonly name: string;
  /**
   * The absolute path found on the child PATH (not symlink-resolved). This is
   * what is executed and what `--allow-run` grants: Deno compares run grants
   * by path text, so grant and spawn must use the same string.
   */
  readonly path: string;
  /** `realpath(path)`: used to decide whether a path-qualified command is the same file. */
  readonly realPath: string;
}

/** One `[[rules]]` entry. */
export interface ArgRule {
  /** Command name the rule applies to (an allowlisted name). */
  readonly command: string;
  /**
   * Token sequences that are refused anywhere in the argv, order-independent:
   * `"push --force"` is the set {push, --force}; all of its words must be
   * present (including `--force=x` and attached short forms) to deny.
   */
  readonly denyArgs: readonly string[];
  /**
   * `"deny"` (default) refuses; `"warn"` lets the command run and reports in
   * the reply and the audit record that this rule would have refused it, so
   * a new rule can be rolled out before it is enforced.
   */
  readonly enforce: "deny" | "warn";
  /** The operator's words for why, quoted in the refusal the model sees and in the audit. */
  readonly reason: string;
  /**
   * `"deny"` (default): `denyArgs` refuse. `"prompt"`: a command every other
   * check allowed is held until a human approves it (`denyArgs` then holds
   * the rule's `args`, matched the same way).
   */
  readonly decision?: "deny" | "prompt";
  /** The sentence shown to the human who answers a prompt rule ("" for deny rules). */
  readonly justification?: string;
  /**
   * Set on the prompt rule of an allowlist entry with `decision = "prompt"`:
   * every run of the command matches, whatever its arguments (`denyArgs` is
   * empty). Never set on a deny rule.
   */
  readonly everyRun?: true;
}

/** One operator rule: exactly this run, by this caller, under this prompt rule, needs no prompt. */
export interface AlwaysRule {
  /** The approval it was made from. */
  readonly id: string;
  /** Who may use it: `local` on stdio, `client:ID` over HTTP (the approval's owner). */
  readonly owner: string;
  /** The run digest the approval bound (every stage, redirections, cwd, stdin). */
  readonly digest: string;
  /** The prompt rule that held the command (`COMMAND ENTRY`). */
  readonly rule: string;
  /** For the operator's eye: what the rule allows (redacted, as in the approval record). */
  readonly argv: readonly string[];
  /** For the operator's eye: the working folder, relative to the jail. */
  readonly cwd: string;
  /** Who wrote the rule: `cli:USER (uid N)`. */
  readonly added_by: string;
  /** When the rule was written, in ms since the epoch. */
  readonly added_ms: number;
}

/** `[approval]`: how a prompted command is answered (docs/approvals.md). */
export interface ApprovalSettings {
  /** How long an approval may be answered and used, in ms. */
  readonly ttlMs: number;
  /** How long one call waits for an out-of-band answer, in ms. */
  readonly waitMs: number;
  /** `"any"`: client elicitation or the operator; `"operator"`: the out-of-band path only. */
  readonly require: "any" | "operator";
  /** `always_allow_file`, absolute; null when the policy names none. */
  readonly alwaysAllowFile?: string | null;
  /** The rules read from it at startup (`htmcp approvals allow ID --always`). */
  readonly alwaysAllow?: readonly AlwaysRule[];
  /** SHA-256 of the file's bytes as loaded; null when absent. */
  readonly alwaysAllowSha256?: string | null;
}

/** An operator-supplied redaction pattern, compiled at startup. */
export interface ExtraPattern {
  /** The kind a match is replaced by: `[REDACTED:<name>]`. */
  readonly name: string;
  /** The operator's detector; a group named `secret`, when present, is what is redacted. */
  readonly regex: RegExp;
}

/**
 * `audit_fail_mode`: `"closed"` refuses any call whose attempt record did not
 * reach the disk (`AUDIT_UNAVAILABLE`); `"open"` warns and runs it anyway.
 */
export type AuditFailMode = "closed" | "open";
/**
 * `[sandbox] mode`. `"auto"` is kept so existing policies still load; it
 * means exactly `"bwrap"` (it used to fall back to no sandbox, silently).
 */
export type SandboxMode = "none" | "bwrap" | "auto";

/**
 * `[sandbox] network`: `"none"` (an empty network namespace), `"allowlist"`
 * (an empty namespace whose only route is htmcp's egress proxy, which opens
 * only `network_allow` destinations), `"host"` (the host's network).
 */
export type SandboxNetwork = "none" | "allowlist" | "host";

/**
 * `[sandbox]` as loaded. `user` is a uid (number) or a user name (string),
 * resolved by the executor at startup; null = the jail's owner (root server)
 * or the server's own uid (non-root server).
 */
export interface SandboxSettings {
  /** `[sandbox] mode`: `"bwrap"` runs every command in bubblewrap; `"none"` only checks paths. */
  readonly mode: SandboxMode;
  /** `[sandbox] network`: what a sandboxed command may reach. */
  readonly network: SandboxNetwork;
  /** `network_allow`, parsed; empty unless `network = "allowlist"`. */
  readonly networkAllow: readonly EgressRule[];
  /** The explicit opt-in that `mode = "none"` needs: the jail is then advisory. */
  readonly acceptPathCheckOnly: boolean;
  /** `[sandbox] user`: who commands run as (see above); null = the default. */
  readonly user: number | string | null;
}
/**
 * `[mode] full_control = true`: `run_command` text runs as `bash -c TEXT`
 * inside the kernel sandbox (never without it: the loader and the executor
 * both refuse). Absent = off, the default.
 */
export interface FullControlSettings {
  /** The shell that runs the text, resolved on the child PATH at startup. */
  readonly shell: ResolvedCommand;
}

/**
 * `[auth] mode` of the HTTP transport: `"oauth"` the co-hosted authorization
 * server, `"external"` tokens of an outside identity provider, `"none"` no
 * authentication (loopback listeners only).
 */
export type AuthMode = "oauth" | "none" | "external";

/** `[sessions]`: how long an unused session lives and how many one caller may hold. */
export interface SessionSettings {
  /** `idle_ttl_s` in ms: a session unused this long has expired. */
  readonly idleTtlMs: number;
  /** `max_per_caller`: live sessions one caller (client, or `local`) may hold. */
  readonly maxPerCaller: number;
}

/** `[links]`: file download links over HTTP (see docs/links.md). */
export interface LinkSettings {
  /** False turns `create_file_link` and `/download/` off. */
  readonly enabled: boolean;
  /** The largest file a link may snapshot. */
  readonly maxFileBytes: number;
  /** A link's lifetime when `create_file_link` names none. */
  readonly defaultTtlMs: number;
  /** The longest lifetime a caller may ask for. */
  readonly maxTtlMs: number;
  /** Live links one caller may hold at once (each holds a snapshot on disk). */
  readonly maxLinksPerCaller: number;
}

/** `[limits]`: the bounds of every call and command. */
export interface Limits {
  /** `timeout_ms`: a command's deadline when the call names none; its tree is killed then. */
  readonly timeoutMs: number;
  /** `max_output_bytes`: output captured per stream; beyond it, bytes are counted, not kept. */
  readonly maxOutputBytes: number;
  /** `max_concurrent`: commands running at once; further calls wait in the fair queue. */
  readonly maxConcurrent: number;
  /** Calls that may wait for a slot at once (`queue_max`); 0 = refuse at once. */
  readonly queueMax: number;
  /** The longest a call waits for a slot (`queue_wait_ms`); 0 = refuse at once. */
  readonly queueWaitMs: number;
  /** Kernel rlimits for each command; null = not set by us (inherit). */
  readonly cpuSeconds: number | null;
  /** `address_space_bytes` (`RLIMIT_AS`); null = inherited. */
  readonly addressSpaceBytes: number | null;
  /** `max_processes` (`RLIMIT_NPROC`, counted per user); null = inherited. */
  readonly maxProcesses: number | null;
  /** `file_size_bytes` (`RLIMIT_FSIZE`): the largest file a command may write; null = inherited. */
  readonly fileSizeBytes: number | null;
  /** `open_files` (`RLIMIT_NOFILE`); null = inherited. */
  readonly openFiles: number | null;
  /** A call with a progressToken gets `notifications/progress` at least this often. */
  readonly progressIntervalMs: number;
  /** A foreground call still running after this long is answered as a job (docs/jobs.md). */
  readonly foregroundMs: number;
  /** The largest `timeout_ms` a call may ask for; a background job's default deadline. */
  readonly maxTimeoutMs: number;
  /** Redacted output kept per stream of a job, for `job_output`. */
  readonly jobOutputBytes: number;
  /** An ended job (record and output) is deleted this long after it ended. */
  readonly jobRetentionMs: number;
  /** Each stream's head and tail kept in a reply; the middle is paged with `job_output`. */
  readonly inlineOutputBytes: number;
}

/** `[http]`: the Streamable HTTP listener and the requests it accepts. */
export interface HttpSettings {
  /** `host:port` to listen on, or null when HTTP is not configured. */
  readonly listen: string | null;
  /** Externally visible origin (`https://mcp.example.com`), or null to derive from listen. */
  readonly baseUrl: string | null;
  /** `tls_cert`: the PEM certificate (outside the jail), or null for plain HTTP. */
  readonly tlsCert: string | null;
  /** `tls_key`: the PEM private key (outside the jail), or null for plain HTTP. */
  readonly tlsKey: string | null;
  /** `allowed_origins`: `Origin` values accepted besides the server's own names (exact). */
  readonly allowedOrigins: readonly string[];
  /** `allowed_hosts`: `Host` values accepted besides the server's own (`host` = any port). */
  readonly allowedHosts: readonly string[];
  /** `max_http_request_bytes`: the largest request body read; 0 = no limit. */
  readonly maxRequestBytes: number;
  /** `max_registration_bytes`: the largest OAuth registration, token or form body. */
  readonly maxRegistrationBytes: number;
  /** `max_concurrent_per_client`: commands one client may run at once; more wait in the queue. */
  readonly maxConcurrentPerClient: number;
  /** Open connections at most; 0 = sized from the file-descriptor limit at startup. */
  readonly maxConnections: number;
  /** A new connection must send its first request's headers within this many ms. */
  readonly headerTimeoutMs: number;
  /** A connection with no request in flight is closed after this many ms. */
  readonly idleTimeoutMs: number;
}

/** `[auth]`: who may call the HTTP transport. */
export interface AuthSettings {
  /** How callers are authenticated. */
  readonly mode: AuthMode;
  /** Serve a loopback request that carries no `Authorization` header without a token (unsafe). */
  readonly allowLocalhostBypass: boolean;
  /** Accept PKCE `plain` besides `S256` (weaker; warned at startup). */
  readonly allowPlainPkce: boolean;
  /** Access token lifetime (`HTMCP_OAUTH_ACCESS_TOKEN_TTL_S`, default 3600). */
  readonly accessTokenTtlSeconds: number;
  /**
   * `client_id_metadata_allow`: client-id metadata document URLs (exact) or
   * host names the built-in server may fetch; empty turns the feature off.
   */
  readonly clientIdMetadataAllow: readonly string[];
  /** The external identity provider (`mode = "external"`), else null. */
  readonly external: ExternalAuthSettings | null;
}

/** `[auth]` keys of `mode = "external"`: htmcp as a pure OAuth resource server. */
export interface ExternalAuthSettings {
  /** The provider's issuer identifier, exactly as it appears in `iss`. */
  readonly issuer: string;
  /** The required `aud`, or null for this server's canonical `/mcp` resource. */
  readonly audience: string | null;
  /** The JWKS URL, or null to read `jwks_uri` from the issuer's discovery document. */
  readonly jwksUri: string | null;
  /** Asymmetric JWS algorithms accepted; never `none`, never HS*. */
  readonly algorithms: readonly string[];
  /** Least time between two JWKS fetches caused by an unknown `kid`. */
  readonly jwksCooldownSeconds: number;
  /** The claim scopes are read from, or null for `scope` then `scp`. */
  readonly scopeClaim: string | null;
  /** RFC 7662 introspection for opaque tokens, or null (opaque tokens are refused). */
  readonly introspection: {
    readonly endpoint: string;
    readonly clientId: string;
    /** Absolute path of the file holding the client secret (read at startup). */
    readonly secretFile: string;
    readonly cacheSeconds: number;
  } | null;
  /** Claim-selected scope profiles, or null (the token's scopes stand as they are). */
  readonly profiles: {
    readonly claim: string;
    /** Claim value -> the scopes a principal with that value may use. */
    readonly scopes: ReadonlyMap<string, readonly string[]>;
  } | null;
}

/** Flags a command or subcommand accepts, spelled exactly; `takesValue` ⊆ `names`. */
export interface FlagList {
  /** Every flag accepted. */
  readonly names: ReadonlySet<string>;
  /** The flags among them that take a value (`--output FILE`, `--output=FILE`). */
  readonly takesValue: ReadonlySet<string>;
  /**
   * Value flags after which every word belongs to the program named by the
   * value (`python3 -m pytest -q`): spelled `"-m=..."` in the policy.
   */
  readonly endsOptions: ReadonlySet<string>;
}

/**
 * `[commands.NAME]`: the subcommands and flags a command may be given. Any
 * other subcommand or flag (an abbreviation included) is refused.
 */
export interface ArgSchema {
  /** Allowed subcommands, or null for a command without subcommands. */
  readonly subcommands: ReadonlySet<string> | null;
  /** Flags of a command without subcommands. */
  readonly flags: FlagList;
  /** `flags.SUB` per subcommand; a subcommand missing here accepts no flag. */
  readonly subcommandFlags: ReadonlyMap<string, FlagList>;
  /** `global_flags`: flags allowed before the subcommand (none by default). */
  readonly globalFlags: FlagList;
}

/** What a `[[tests]]` entry may expect: the verdict codes of a check that runs nothing. */
export type PolicyTestCode = "OK" | "POLICY_DENIED" | "PARSE_ERROR" | "CWD_ESCAPE" | "PATH_ESCAPE";

/**
 * One `[[tests]]` entry: an example the operator wrote into the policy, with
 * the verdict it must get. Checked at every startup and by `htmcp policy test`.
 */
export interface PolicyTest {
  /** `name`, or the command text when unnamed; used in every message about the test. */
  readonly name: string;
  /** The command text, judged as `check_command` would judge it (nothing runs). */
  readonly command: string;
  /** The cwd to judge it in (relative to the jail), or null for the jail root. */
  readonly cwd: string | null;
  /** The code the verdict must have. */
  readonly expect: PolicyTestCode;
  /** A piece of text the verdict's reason must contain, or null. */
  readonly reasonContains: string | null;
}

/** `[audit]` built-in rotation; both off by default (use logrotate, or these). */
export interface AuditRotation {
  /** Rotate once the log reaches this many bytes; null: no size limit. */
  readonly bytes: number | null;
  /** Rotate when the UTC day of the log's first record is not today's. */
  readonly daily: boolean;
}

/** `[audit]` signed checkpoints of the chain head (on when a state dir holds the key). */
export interface AuditCheckpoints {
  /** A checkpoint each time `seq` passes a multiple of this; 0: only at rotation and shutdown. */
  readonly every: number;
  /** Also print each checkpoint on stderr (journald, container logs). */
  readonly stderr: boolean;
  /** The checkpoint file, beside the log (`audit.checkpoints.jsonl`). */
  readonly path: string;
}

/** `[log] level`: the least severe operator log line written. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** `[log]`: the operator log on stderr (one line per request, per call, per lifecycle event). */
export interface LogSettings {
  /** One human-readable line per event, or one JSON object per line. */
  readonly format: "text" | "json";
  /** Lines less severe than this are not written. */
  readonly level: LogLevel;
}

/** `[telemetry]`: OpenTelemetry export over OTLP/HTTP; absent means off. */
export interface TelemetrySettings {
  /** The OTLP/HTTP base URL, no trailing slash; signals go to `/v1/traces` and `/v1/metrics`. */
  readonly otlpEndpoint: string;
  /** `service.name` on every span and metric. */
  readonly serviceName: string;
  /** How often metrics are exported (they are also flushed at shutdown). */
  readonly metricsIntervalMs: number;
}

/**
 * `[state]`: the durable state backend. The PostgreSQL URL itself is never
 * held here (it carries a password): only where it comes from and the
 * host:port the permission layer grants.
 */
export type StateSettings =
  | { readonly backend: "local" }
  | {
    readonly backend: "postgres";
    /** `[state] url_file` (absolute), or null when only `HTMCP_STATE_URL` gives the URL. */
    readonly urlFile: string | null;
    readonly host: string;
    readonly port: number;
  };

/**
 * The loaded policy: `policy.toml` (and its environment overrides) validated,
 * resolved (paths real, commands found on the child PATH) and frozen at
 * startup. Every layer reads its part of it; nothing changes it afterwards.
 */
export interface Policy {
  /** Absolute path of the policy file, or null when built from env alone. */
  readonly policyFile: string | null;
  /** `realpath` of the jail root: every cwd and path argument must stay below it. */
  readonly jailRoot: string;
  /** Absolute path of the audit log (never inside the jail root). */
  readonly auditLog: string;
  /** `audit_fail_mode`: whether a call may run when its attempt record could not be written. */
  readonly auditFailMode: AuditFailMode;
  /** Built-in rotation (`[audit] rotate_bytes`, `rotate_daily`); absent means off. */
  readonly auditRotation?: AuditRotation;
  /** Signed checkpoints; absent when off (no state dir, or `checkpoint_every` unset without one). */
  readonly auditCheckpoints?: AuditCheckpoints;
  /** `[audit] expose_to_model`: serve the `audit_tail` tool. Absent means false. */
  readonly auditExposeToModel?: boolean;
  /** `[state]`; absent means the local backend (`state_dir`). */
  readonly state?: StateSettings;
  /** Absolute state directory (OAuth secret, clients), or null when unused. */
  readonly stateDir: string | null;
  /** Allowlisted names -> resolution. A `Map`, so `constructor` cannot match an inherited key. */
  readonly allowlist: ReadonlyMap<string, ResolvedCommand>;
  /** `[denylist] commands`: names refused whatever else allows them (compared in lower case). */
  readonly denylist: ReadonlySet<string>;
  /** `[[rules]]`: argument patterns refused (or warned about, or prompted) per command. */
  readonly rules: readonly ArgRule[];
  /** `[commands.NAME]` argument schemas, by allowlisted name. */
  readonly argSchemas: ReadonlyMap<string, ArgSchema>;
  /** `[[tests]]`: examples and their expected verdicts, in file order. */
  readonly tests: readonly PolicyTest[];
  /** Names of built-in escape-hatch guards the operator switched off. */
  readonly disabledGuards: ReadonlySet<string>;
  /** `[paths] confine_args`. */
  readonly confineArgs: boolean;
  /** `[limits]`. */
  readonly limits: Limits;
  /** `[redaction]`: whether output and the audit are redacted, and the operator's detectors. */
  readonly redaction: {
    readonly enabled: boolean;
    readonly entropyFallback: boolean;
    readonly extraPatterns: readonly ExtraPattern[];
  };
  /** Names passed through to children (`[env] pass`). */
  readonly envPass: readonly string[];
  /**
   * The complete child environment, computed once at startup from `envPass`
   * and the server's environment (PATH defaults to `DEFAULT_CHILD_PATH`).
   * The model can never add to it.
   */
  readonly childEnv: Readonly<Record<string, string>>;
  /** `[describe] show_jail_path`: show the jail's real path to the model, or a marker. */
  readonly showJailPath: boolean;
  /** `[sessions]`: how long an unused session lives and how many one caller may hold. */
  readonly sessions: SessionSettings;
  /** `[links]`: file download links (HTTP only). */
  readonly links: LinkSettings;
  /** `[approval]`; absent means the defaults (`APPROVAL_DEFAULTS`). */
  readonly approval?: ApprovalSettings;
  /** `[sandbox]`: the kernel sandbox every command runs in. */
  readonly sandbox: SandboxSettings;
  /** Full-control mode; absent when off. */
  readonly fullControl?: FullControlSettings;
  /** `[http]`. */
  readonly http: HttpSettings;
  /** `[auth]`. */
  readonly auth: AuthSettings;
  /** `[log]`; absent means text at level info. */
  readonly log?: LogSettings;
  /** `[telemetry]`; absent means no export, and no exporter is loaded. */
  readonly telemetry?: TelemetrySettings;
  /** Startup warnings (e.g. an interpreter on the allowlist), printed once to stderr. */
  readonly warnings: readonly string[];
}

/** The fixed PATH children get when `PATH` is not passed through or not set. */
export const DEFAULT_CHILD_PATH = "/usr/local/bin:/usr/bin:/bin";

/** One parsed entry. */
export interface EgressRule {
  /** The entry as written (for messages and the audit). */
  readonly text: string;
  /** `"exact"`: `host` itself; `"subdomains"`: names ending in `.${host}`. */
  readonly kind: "exact" | "subdomains";
  /** Lower case, no trailing dot; an IPv6 literal keeps its brackets. */
  readonly host: string;
  /** The one port allowed (always explicit in the entry: there is no "any port"). */
  readonly port: number;
  /** True when `host` is an IP literal: the operator named an address on purpose. */
  readonly literal: boolean;
}
