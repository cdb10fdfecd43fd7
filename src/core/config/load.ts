import { readFileSync } from 'node:fs';
import { closest, distance } from 'fastest-levenshtein';
import { configKeys } from './reference';
import { configSchema, secretKeys, type Config } from './schema';
import {
  guessingOdds,
  isLoopbackHost,
  MAX_GUESSING_ODDS,
  MIN_KEY_LENGTH,
  mostAttempts,
  receiptsOverPlainHttp,
} from './weakened';

type Tree = Record<string, unknown>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export interface LoadOptions {
  /** Environment to read `CONFIG_FILE` and `SECTION__KEY` overrides from. */
  env?: NodeJS.ProcessEnv;
  /** Merged over the file and under the environment; used by tests and embedders. */
  overrides?: Tree;
}

const isTree = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);
const unsafeKey = (k: string) => k === '__proto__' || k === 'constructor' || k === 'prototype';

export function deepMerge(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (unsafeKey(key)) continue;
    const current = out[key];
    out[key] = isTree(current) && isTree(value) ? deepMerge(current, value) : value;
  }
  return out;
}

/**
 * yaml, loaded only for a YAML file: most starts and every test read no configuration file, and
 * the parser takes a noticeable share of a test file's load. A require, not import(): the build
 * is CommonJS, and Jest runs CommonJS without its ESM loader.
 */
function parseYaml(text: string): unknown {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('yaml') as typeof import('yaml')).parse(text);
}

function readConfigFile(path: string): Tree {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError([`CONFIG_FILE: cannot read ${path}: ${(err as Error).message}`]);
  }
  let parsed: unknown;
  try {
    parsed = /\.ya?ml$/i.test(path) ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw new ConfigError([
      `CONFIG_FILE: ${path} is not valid ${/\.ya?ml$/i.test(path) ? 'YAML' : 'JSON'}: ${(err as Error).message}`,
    ]);
  }
  if (parsed == null) return {};
  if (!isTree(parsed)) throw new ConfigError([`CONFIG_FILE: ${path} must hold an object at the top level`]);
  return parsed;
}

/** `true`, `false` and JSON numbers are taken as such; everything else stays a string. */
function envValue(raw: string): unknown {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (raw.trim() !== '' && /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(raw.trim())) return Number(raw);
  return raw;
}

/** One configuration variable of the environment: its name as written, and the key path it sets. */
interface EnvVariable {
  name: string;
  path: string[];
  raw: string;
}

/** `OTP__TTL_SECONDS=120` -> otp.ttl_seconds, for top-level sections only. */
function configVariables(env: NodeJS.ProcessEnv): EnvVariable[] {
  const sections = new Set(Object.keys(configSchema.shape));
  const variables: EnvVariable[] = [];
  for (const [name, raw] of Object.entries(env)) {
    if (raw === undefined) continue;
    const path = name.toLowerCase().split('__');
    if (!sections.has(path[0]!) || path.some((p) => p === '' || unsafeKey(p))) continue;
    // A single-segment name is only a top-level scalar (`DEBUG=true`); `DEBUG=express:*` belongs to other tools.
    if (path.length === 1 && raw !== 'true' && raw !== 'false') continue;
    variables.push({ name, path, raw });
  }
  return variables;
}

/** `OTP__TTL_SECONDS=120` -> { otp: { ttl_seconds: 120 } }, for top-level sections only. */
export function envOverrides(env: NodeJS.ProcessEnv): Tree {
  const out: Tree = {};
  for (const { path, raw } of configVariables(env)) {
    let node = out;
    for (const segment of path.slice(0, -1)) {
      if (!isTree(node[segment])) node[segment] = {};
      node = node[segment] as Tree;
    }
    node[path[path.length - 1]!] = envValue(raw);
  }
  return out;
}

// Into lists too (`redis.cluster.0`), so a refused list entry is shown.
const getPath = (tree: Tree, dotted: string): unknown =>
  dotted
    .split('.')
    .reduce<unknown>((node, key) => (isTree(node) || Array.isArray(node) ? (node as Tree)[key] : undefined), tree);

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  const shown = JSON.stringify(value);
  return shown.length > 60 ? `${shown.slice(0, 57)}...` : shown;
}

export const environments = ['production', 'development', 'test'] as const;
export type Environment = (typeof environments)[number];

/**
 * NODE_ENV, one of three spellings exactly: a production refusal keyed on a string compare would
 * let `NODE_ENV=Production` or `prod` start with codes in answers. Unset, it is production as soon
 * as anything is configured; only a run with nothing configured (a fresh `npm start`, which lands
 * in the sandbox) is development without naming it.
 */
export function environmentOf(nodeEnv: string | undefined, configured: boolean): Environment {
  if (nodeEnv === undefined || nodeEnv === '') return configured ? 'production' : 'development';
  if ((environments as readonly string[]).includes(nodeEnv)) return nodeEnv as Environment;
  throw new ConfigError([
    `NODE_ENV: must be one of ${environments.join(', ')} (got ${describe(nodeEnv)}); unset means production once anything is configured`,
  ]);
}

/**
 * Where the service listens says nothing about where it runs: `SERVER__PORT=0 npm start` is
 * still the sandbox. Any other variable is a deployment's (a container's, a Kubernetes pod's),
 * whichever key it sets: a secret, a Redis URL, an SMS provider, a log level.
 */
const PLACE_KEYS: ReadonlySet<string> = new Set(['server.host', 'server.port']);

/** The environment a run is judged for, and what decided it: named in the start line, never a value. */
export interface EnvironmentChoice {
  environment: Environment;
  /**
   * `NODE_ENV` when it names the environment; else what made it production: `CONFIG_FILE`, the
   * first configuration variable set (by name), or `overrides` (an embedder's); empty when
   * nothing is configured (development, on the sandbox).
   */
  decidedBy: string;
  /** Anything configured besides the address: the sandbox is then never on by default. */
  configured: boolean;
}

export function chooseEnvironment(env: NodeJS.ProcessEnv, overrides?: Tree): EnvironmentChoice {
  const variables = configVariables(env)
    .filter((v) => !PLACE_KEYS.has(v.path.join('.')))
    .map((v) => v.name)
    .sort();
  const by = env.CONFIG_FILE ? 'CONFIG_FILE' : overrides !== undefined ? 'overrides' : (variables[0] ?? '');
  const configured = by !== '';
  const environment = environmentOf(env.NODE_ENV, configured);
  return { environment, decidedBy: env.NODE_ENV ? 'NODE_ENV' : by, configured };
}

/** The start line's words for a choice: the environment and the key that decided it, never its value. */
export function describeEnvironment(choice: Pick<EnvironmentChoice, 'environment' | 'decidedBy'>): string {
  if (choice.decidedBy === 'NODE_ENV') return `${choice.environment} (NODE_ENV)`;
  if (choice.decidedBy === '')
    return `${choice.environment} (nothing configured: no CONFIG_FILE, no variable but SERVER__HOST and SERVER__PORT)`;
  return `${choice.environment} (${choice.decidedBy} is set and NODE_ENV is not)`;
}

/**
 * Limits for one developer walking docs/getting-started.md, the demo and /flows's examples again and again:
 * ten times the production defaults, under whatever the configuration sets. The cooldown stays
 * the contract's; `POST /_sandbox/reset` clears it with the rest (docs/demo.md).
 */
export const SANDBOX_LIMITS: Tree = {
  rate_limits: {
    sends_per_identifier_per_hour: 200,
    sends_per_ip_per_hour: 1000,
    verifies_per_ip_per_minute: 300,
    lookups_per_ip_per_minute: 300,
    sends_per_recipient: 50,
    lookups_per_account_per_hour: 100,
    password_logins_per_ip: 300,
    password_logins_per_email: 50,
    registrations_per_ip_per_hour: 100,
    subscriptions_per_ip_per_hour: 200,
    subscriptions_per_email_per_day: 50,
  },
  sms: { pumping: { prefix_sends_per_hour: 600 } },
};

/**
 * Defaults aside, what the service would read: CONFIG_FILE <- overrides <- environment, merged
 * and not yet validated. Operator commands read one section of it (scripts/lib/service.ts: the
 * address and the language) without being refused what production refuses.
 */
export function configTree(options: LoadOptions = {}): Tree {
  const env = options.env ?? process.env;
  const fromFile = env.CONFIG_FILE ? readConfigFile(env.CONFIG_FILE) : {};
  return deepMerge(deepMerge(fromFile, options.overrides ?? {}), envOverrides(env));
}

/** What a configuration run needs besides the keys: the environment it runs in, and what decided it. */
export interface LoadedConfig {
  config: Config;
  environment: Environment;
  decidedBy: string;
}

/**
 * Defaults <- CONFIG_FILE <- overrides <- environment, validated by one schema.
 * The sandbox is on by default only when nothing is configured (chooseEnvironment).
 */
export function loadConfig(options: LoadOptions = {}): Config {
  return loadConfiguration(options).config;
}

/** loadConfig, and the environment it was judged for (production refusals, the start line). */
export function loadConfiguration(options: LoadOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const merged = configTree(options);

  const variables = configVariables(env);
  const { environment, decidedBy, configured } = chooseEnvironment(env, options.overrides);
  if (getPath(merged, 'sandbox.enabled') === undefined && !configured && environment !== 'production') {
    merged.sandbox = { ...(isTree(merged.sandbox) ? merged.sandbox : {}), enabled: true };
  }
  const sized = getPath(merged, 'sandbox.enabled') === true ? deepMerge(SANDBOX_LIMITS, merged) : merged;
  // The bot challenge is asked only when traffic looks wrong in production unless configured; elsewhere it is off unless configured (docs/security.md).
  if (environment === 'production' && getPath(sized, 'challenge.mode') === undefined) {
    sized.challenge = { ...(isTree(sized.challenge) ? sized.challenge : {}), mode: 'adaptive' };
  }

  const result = configSchema.safeParse(sized);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.flatMap((issue) => {
        const key = issue.path.join('.') || '(root)';
        if (issue.code === 'unrecognized_keys')
          return issue.keys.map((k) => unknownKey(issue.path.map(String), k, variables));
        // Secrets are never echoed back, even when invalid.
        const secret =
          /secret|token|key|pass/.test(key) || secretKeys.some((k) => key === k || key.startsWith(`${k}.`));
        const shown = secret ? '' : ` (got ${describe(getPath(merged, key))})`;
        return `${key}: ${issue.message}${shown}`;
      }),
    );
  }
  const refusals = environment === 'production' ? productionRefusals(result.data) : [];
  if (refusals.length > 0) throw new ConfigError(refusals);
  return { config: result.data, environment, decidedBy };
}

/**
 * An unknown key, with the known key nearest its spelling at the same place; from the
 * environment it is named by its variable, as the operator wrote it (`SERVER__PROT: unknown;
 * did you mean SERVER__PORT?`), so the line says what to change where.
 */
function unknownKey(parent: string[], name: string, variables: EnvVariable[]): string {
  const depth = parent.length;
  const siblings = [
    ...new Set(
      configKeys()
        .map((k) => k.key.split('.'))
        .filter((path) => path.length > depth && parent.every((p, i) => path[i] === p))
        .map((path) => path[depth]!),
    ),
  ];
  const near = siblings.length > 0 ? closest(name.toLowerCase(), siblings) : undefined;
  // Near enough to be a slip of the keyboard, not another word: `prot` for `port`, not `color` for `host`.
  const suggestion =
    near !== undefined && distance(name.toLowerCase(), near) <= Math.max(2, Math.floor(name.length / 3))
      ? [...parent, near]
      : undefined;
  const dotted = [...parent, name].join('.');
  const variable = variables.find((v) => v.path.join('.') === dotted);
  if (variable)
    return `${variable.name}: unknown${suggestion ? `; did you mean ${suggestion.map((p) => p.toUpperCase()).join('__')}?` : ''}`;
  return `${dotted}: unknown key${suggestion ? `; did you mean ${suggestion.join('.')}?` : ''}`;
}

/** What production forbids (docs/operations.md, production checklist), one line per problem. */
function productionRefusals(cfg: Config): string[] {
  const problems: string[] = [];
  if (cfg.sandbox.enabled) problems.push('sandbox.enabled: the sandbox is refused in production');
  if (cfg.otp.debug) problems.push('otp.debug: plain codes in answers are refused in production');
  if (cfg.debug) problems.push('debug: debug fields are refused in production');
  // Keys that open something: guessable in a day when short (docs/security.md, "Keys that resist guessing").
  if (cfg.security.secret.length < MIN_KEY_LENGTH)
    problems.push(`security.secret: at least ${MIN_KEY_LENGTH} characters are required in production`);
  for (const [key, value] of [
    ['security.internal_key', cfg.security.internal_key],
    ['funnel.read_key', cfg.funnel.read_key],
    ['metrics.token', cfg.metrics.token],
  ] as const) {
    if (value !== '' && value.length < MIN_KEY_LENGTH)
      problems.push(
        `${key}: at least ${MIN_KEY_LENGTH} characters are required in production (or leave it empty to close what it opens)`,
      );
  }
  const odds = guessingOdds(cfg.otp);
  if (odds >= MAX_GUESSING_ODDS) {
    const most = mostAttempts(cfg.otp.length);
    const chance = odds >= 1 ? 'certainty' : `1 chance in ${Math.round(1 / odds).toLocaleString('en')}`;
    const instead =
      most >= 1
        ? `at most ${most} for otp.length ${cfg.otp.length}`
        : `otp.length ${cfg.otp.length} allows none (5 digits allow 9 tries, 6 allow 99)`;
    problems.push(
      `otp.max_attempts: ${cfg.otp.max_attempts} wrong tries on a ${cfg.otp.length}-digit code give a guesser ${chance}; under 1 in 10,000 is required in production: ${instead}`,
    );
  }
  if (!cfg.sms.pumping.enabled && !cfg.sms.pumping.disabled_in_production) {
    problems.push(
      'sms.pumping.enabled: false (codes to premium-rate ranges unchecked) is refused in production unless sms.pumping.disabled_in_production is true',
    );
  }
  if (receiptsOverPlainHttp(cfg)) {
    problems.push(
      'sms.receipts.callback_base_url: receipts over plain http (readable and replayable on the way) are refused in production; use https',
    );
  }
  if (cfg.metrics.port !== 0 && !isLoopbackHost(cfg.metrics.host) && !cfg.metrics.open_in_production) {
    problems.push(
      `metrics.host: ${cfg.metrics.host} serves /metrics without a token to whoever reaches it; refused in production unless metrics.open_in_production is true`,
    );
  }
  if (Object.keys(cfg.otp.test_numbers).length > 0 && !cfg.otp.test_numbers_in_production) {
    problems.push(
      'otp.test_numbers: fixed codes are refused in production unless otp.test_numbers_in_production is true',
    );
  }
  if (!cfg.security.guard_primitives && !cfg.security.guard_primitives_off_in_production) {
    problems.push(
      'security.guard_primitives: false (tokens and profiles for anyone) is refused in production unless security.guard_primitives_off_in_production is true',
    );
  }
  if (!cfg.rate_limits.enabled && !cfg.rate_limits.disabled_in_production) {
    problems.push(
      'rate_limits.enabled: false (sends and guesses unmetered) is refused in production unless rate_limits.disabled_in_production is true',
    );
  }
  if (cfg.challenge.mode === 'off' && cfg.rate_limits.enabled && !cfg.challenge.off_in_production) {
    problems.push(
      'challenge.mode: off (codes sent to bots that never prove any work) is refused in production unless challenge.off_in_production is true',
    );
  }
  if (cfg.passkeys.enabled) {
    const missing = [
      cfg.passkeys.rp_id === '' && 'passkeys.rp_id',
      cfg.passkeys.origins.length === 0 && 'passkeys.origins',
      cfg.database.url === '' && 'database.url',
    ].filter((key): key is string => key !== false);
    if (missing.length > 0)
      problems.push(
        `passkeys.enabled: refused in production without ${missing.join(', ')} (the relying party the passkeys are bound to, and a PostgreSQL server that keeps them across instances)`,
      );
  }
  if (cfg.demo.enabled && !cfg.demo.enabled_in_production) {
    problems.push('demo.enabled: the demo page is refused in production unless demo.enabled_in_production is true');
  }
  return problems;
}
