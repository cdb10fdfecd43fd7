import { parseArgs } from 'node:util';
import { ConfigError, configTree } from '../../src/core/config/load';
import { configSchema } from '../../src/core/config/schema';
import { textLocale, type TextLocale } from '../../src/core/text-locale';

/*
 * What every operator command that calls a running service shares (npm run ledger, npm run
 * funnel): where the service is, which language to write in, `--help`, and a failure that names
 * the address it tried.
 *
 * The address: `--url`, else the one the service itself listens on, read from the same
 * configuration it reads (CONFIG_FILE, then SERVER__HOST / SERVER__PORT) by its own loader. Only
 * the `server` and `mail` sections are validated: a command needs host, port and language, and
 * must not refuse a production configuration for what production refuses of the service.
 *
 * The key: `--key`, else the environment (SECURITY__INTERNAL_KEY; INTERNAL_KEY and, for the
 * funnel, FUNNEL_KEY as before), else `security.internal_key` (for the funnel then
 * `funnel.read_key`) in CONFIG_FILE, read by the service's own loader. Which one was used is
 * named when the service refuses it, and only then.
 *
 * The language: `--locale`, else the terminal's (LC_ALL, LC_MESSAGES, LANG) when the service
 * writes it, else the service's `mail.default_locale`. The service's answers are asked in the
 * same language (Accept-Language), so a refusal reads like the rest.
 */

type Localized = Record<TextLocale, string>;

export interface CommandOption {
  type: 'string' | 'boolean';
  /** How the value is written in --help (`<base>`); none for a flag. */
  value?: string;
  help: Localized;
}

export interface CommandSpec<O extends Record<string, CommandOption>> {
  /** `npm run ledger -- [options]`. */
  usage: string;
  summary: Localized;
  options: O;
}

type Values<O extends Record<string, CommandOption>> = {
  [K in keyof O]?: O[K]['type'] extends 'boolean' ? boolean : string;
};

export interface ServiceCommand<O extends Record<string, CommandOption>> {
  /** The service's base URL, no trailing slash. */
  url: string;
  locale: TextLocale;
  values: Values<O>;
}

const TEXTS = {
  it: {
    options: 'Opzioni',
    url: (shown: string) =>
      `il servizio (qui: ${shown}, da CONFIG_FILE, SERVER__HOST e SERVER__PORT come li legge il servizio)`,
    locale: (shown: string) => `la lingua di questo comando, it o en (qui: ${shown}, da LANG o da mail.default_locale)`,
    help: 'questo aiuto',
    unknown: (option: string) => `opzione sconosciuta ${option} (vedi --help)`,
    needsValue: (option: string) => `${option} vuole un valore (vedi --help)`,
    badLocale: (given: string) => `--locale ${given}: it o en`,
    badUrl: (given: string) => `--url ${given}: un indirizzo http(s) come http://127.0.0.1:8080`,
    badServer: (problems: string) => `configurazione del servizio non valida: ${problems}`,
    unreachable: (url: string, why: string) =>
      `nessuna risposta da ${url} (${why}). Il servizio è in ascolto lì? Altrimenti --url, o SERVER__HOST / SERVER__PORT / CONFIG_FILE come li ha il servizio.`,
    notJson: (url: string, status: number) => `${url} ha risposto ${status} senza JSON: è il servizio?`,
    keyRefused: (from: string) =>
      `il servizio ha rifiutato la chiave presa da ${from}: non è la sua (security.internal_key, o funnel.read_key per il funnel)`,
    lockedOut: (from: string, error: string) =>
      `${error} Troppe chiavi sbagliate da questo indirizzo: ogni chiave è rifiutata fino ad allora, anche quella giusta (l'ultima presa da ${from}).`,
    noKey: (funnel: boolean) =>
      `serve una chiave da operatore: --key, SECURITY__INTERNAL_KEY${funnel ? ', INTERNAL_KEY o FUNNEL_KEY' : ' o INTERNAL_KEY'}, oppure security.internal_key${funnel ? ' (o funnel.read_key)' : ''} nel CONFIG_FILE`,
    refused: (status: number, error: string) => `${status}: ${error}`,
  },
  en: {
    options: 'Options',
    url: (shown: string) =>
      `the service (here: ${shown}, from CONFIG_FILE, SERVER__HOST and SERVER__PORT as the service reads them)`,
    locale: (shown: string) =>
      `the language of this command, it or en (here: ${shown}, from LANG or mail.default_locale)`,
    help: 'this help',
    unknown: (option: string) => `unknown option ${option} (see --help)`,
    needsValue: (option: string) => `${option} needs a value (see --help)`,
    badLocale: (given: string) => `--locale ${given}: it or en`,
    badUrl: (given: string) => `--url ${given}: an http(s) address such as http://127.0.0.1:8080`,
    badServer: (problems: string) => `the service's configuration is not valid: ${problems}`,
    unreachable: (url: string, why: string) =>
      `no answer from ${url} (${why}). Is the service listening there? Otherwise --url, or SERVER__HOST / SERVER__PORT / CONFIG_FILE as the service has them.`,
    notJson: (url: string, status: number) => `${url} answered ${status} without JSON: is it the service?`,
    keyRefused: (from: string) =>
      `the service refused the key taken from ${from}: it is not its security.internal_key (or, for the funnel, funnel.read_key)`,
    lockedOut: (from: string, error: string) =>
      `${error} Too many wrong keys from this address: every key is refused until then, the right one too (the last taken from ${from}).`,
    noKey: (funnel: boolean) =>
      `an operator's key is needed: --key, SECURITY__INTERNAL_KEY${funnel ? ', INTERNAL_KEY or FUNNEL_KEY' : ' or INTERNAL_KEY'}, or security.internal_key${funnel ? ' (or funnel.read_key)' : ''} in CONFIG_FILE`,
    refused: (status: number, error: string) => `${status}: ${error}`,
  },
} satisfies Record<TextLocale, unknown>;

/** A command's failure, already written in its language: printed as it is. */
export class CommandError extends Error {}

/** The sections of the service's configuration a command reads, validated as the service validates them. */
function serviceSettings(env: NodeJS.ProcessEnv, chosen: TextLocale | undefined): { url: string; locale: string } {
  const tree = configTree({ env });
  const server = configSchema.shape.server.safeParse(tree.server);
  const mail = configSchema.shape.mail.safeParse(tree.mail);
  for (const [name, parsed] of [
    ['server', server],
    ['mail', mail],
  ] as const) {
    if (!parsed.success) {
      const problems = parsed.error.issues
        .map((issue) => `${[name, ...issue.path].join('.')}: ${issue.message}`)
        .join('; ');
      throw new CommandError(TEXTS[chosen ?? 'it'].badServer(problems));
    }
  }
  const { host, port } = server.data!;
  // Where the service listens on every interface, this machine reaches it on loopback.
  const reachable = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  const shown = reachable.includes(':') ? `[${reachable}]` : reachable;
  return { url: `http://${shown}:${port}`, locale: mail.data!.default_locale };
}

/** The terminal's language when the service writes it (`it_IT.UTF-8` -> it); undefined for C, POSIX and the rest. */
function terminalLanguage(env: NodeJS.ProcessEnv): TextLocale | undefined {
  const tag = env.LC_ALL || env.LC_MESSAGES || env.LANG || '';
  const language = /^([a-z]{2,3})([_-]|\.|$)/i.exec(tag)?.[1]?.toLowerCase();
  return language === 'it' || language === 'en' ? language : undefined;
}

function helpText<O extends Record<string, CommandOption>>(
  spec: CommandSpec<O>,
  locale: TextLocale,
  url: string,
): string {
  const t = TEXTS[locale];
  const all: Array<[string, string | undefined, string]> = [
    ...Object.entries(spec.options).map(([name, option]): [string, string | undefined, string] => [
      name,
      option.value,
      option.help[locale],
    ]),
    ['url', '<base>', t.url(url)],
    ['locale', '<it|en>', t.locale(locale)],
    ['help', undefined, t.help],
  ];
  const left = all.map(([name, value]) => `--${name}${value ? ` ${value}` : ''}`);
  const width = Math.max(...left.map((l) => l.length));
  return [
    spec.usage,
    '',
    spec.summary[locale],
    '',
    `${t.options}:`,
    ...all.map(([, , help], i) => `  ${left[i]!.padEnd(width)}  ${help}`),
  ].join('\n');
}

/**
 * Reads a command's arguments: the options it declares plus --url, --locale and --help.
 * `{ help }` is the text to print for --help; otherwise where and how to call the service.
 */
export function readCommand<O extends Record<string, CommandOption>>(
  spec: CommandSpec<O>,
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): { help: string } | ServiceCommand<O> {
  // The language first, so the arguments' errors are written in it too.
  const given = argv.findIndex((a) => a === '--locale' || a.startsWith('--locale='));
  const flagLocale =
    given === -1 ? undefined : argv[given]!.includes('=') ? argv[given]!.slice('--locale='.length) : argv[given + 1];
  const chosen =
    flagLocale !== undefined && /^(it|en)$/i.test(flagLocale)
      ? (flagLocale.toLowerCase() as TextLocale)
      : terminalLanguage(env);
  const settings = serviceSettings(env, chosen);
  const locale = chosen ?? textLocale(settings.locale);
  const t = TEXTS[locale];

  const options: Record<string, { type: 'string' | 'boolean' }> = {
    url: { type: 'string' },
    locale: { type: 'string' },
    help: { type: 'boolean' },
  };
  for (const [name, option] of Object.entries(spec.options)) options[name] = { type: option.type };
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values as Record<
      string,
      string | boolean | undefined
    >;
  } catch (err) {
    const code = (err as { code?: string }).code;
    const option = /'(-[^']*)'/.exec((err as Error).message)?.[1] ?? argv.find((a) => a.startsWith('-')) ?? '';
    throw new CommandError(
      code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'
        ? t.needsValue(option.split(' ')[0]!)
        : t.unknown(option.split(' ')[0]!),
    );
  }
  if (typeof values.locale === 'string' && !/^(it|en)$/i.test(values.locale))
    throw new CommandError(t.badLocale(values.locale));
  if (typeof values.url === 'string' && !/^https?:\/\/[^\s/]+/.test(values.url))
    throw new CommandError(t.badUrl(values.url));

  const url = (typeof values.url === 'string' ? values.url : settings.url).replace(/\/+$/, '');
  if (values.help) return { help: helpText(spec, locale, url) };
  const own: Record<string, unknown> = {};
  for (const name of Object.keys(spec.options)) own[name] = values[name];
  return { url, locale, values: own as Values<O> };
}

/** An operator's key, the header it goes in, and where it was found (named when refused, never its value). */
export interface OperatorKey {
  header: 'x-internal-key' | 'x-funnel-key';
  value: string;
  /** `--key`, a variable's name, or `CONFIG_FILE (security.internal_key)`. */
  from: string;
}

/**
 * The key a command presents, from the first place that has one: `--key`, the environment,
 * CONFIG_FILE (see the header). `funnel`: the funnel's read-only key is accepted too.
 */
export function operatorKey(
  given: string | undefined,
  env: NodeJS.ProcessEnv,
  options: { funnel?: boolean; locale?: TextLocale } = {},
): OperatorKey | undefined {
  const internal = (value: string, from: string): OperatorKey => ({ header: 'x-internal-key', value, from });
  if (given) return internal(given, '--key');
  if (env.SECURITY__INTERNAL_KEY) return internal(env.SECURITY__INTERNAL_KEY, 'SECURITY__INTERNAL_KEY');
  if (env.INTERNAL_KEY) return internal(env.INTERNAL_KEY, 'INTERNAL_KEY');
  if (options.funnel && env.FUNNEL_KEY) return { header: 'x-funnel-key', value: env.FUNNEL_KEY, from: 'FUNNEL_KEY' };
  if (!env.CONFIG_FILE) return undefined;
  // The file alone, through the service's loader: a key in the environment was looked for above, by its own name.
  let tree: Record<string, unknown>;
  try {
    tree = configTree({ env: { CONFIG_FILE: env.CONFIG_FILE } });
  } catch (err) {
    throw new CommandError(err instanceof ConfigError ? err.problems.join('; ') : (err as Error).message);
  }
  const security = configSchema.shape.security.safeParse(tree.security);
  const funnel = configSchema.shape.funnel.safeParse(tree.funnel);
  for (const [name, parsed] of [
    ['security', security],
    ['funnel', funnel],
  ] as const) {
    if (!parsed.success) {
      // Never the value: a key's section refused names its keys only.
      const problems = parsed.error.issues
        .map((issue) => `${[name, ...issue.path].join('.')}: ${issue.message}`)
        .join('; ');
      throw new CommandError(TEXTS[options.locale ?? 'it'].badServer(problems));
    }
  }
  if (security.data!.internal_key) return internal(security.data!.internal_key, 'CONFIG_FILE (security.internal_key)');
  if (options.funnel && funnel.data!.read_key)
    return { header: 'x-funnel-key', value: funnel.data!.read_key, from: 'CONFIG_FILE (funnel.read_key)' };
  return undefined;
}

/** The headers that present `key`, if any. */
export const keyHeaders = (key: OperatorKey | undefined): Record<string, string> =>
  key ? { [key.header]: key.value } : {};

/**
 * Why the service refused a command, in the command's language: the key is named only when the
 * key was what it refused (401 with a key; 429 after wrong keys); no key, when none was found;
 * otherwise the service's own words and what it found wrong in the request.
 */
export function refusal(
  command: Pick<ServiceCommand<Record<string, CommandOption>>, 'locale'>,
  status: number,
  body: { error?: string | null; data?: unknown },
  key: OperatorKey | undefined,
  options: { funnel?: boolean } = {},
): CommandError {
  const t = TEXTS[command.locale];
  const error = body.error ?? '';
  const reason = (body.data as { reason?: string } | null | undefined)?.reason;
  if (status === 401) return new CommandError(key ? t.keyRefused(key.from) : t.noKey(options.funnel ?? false));
  if (status === 429 && key && reason === 'rate_limited') return new CommandError(t.lockedOut(key.from, error));
  const issues = (body.data as { issues?: Array<{ path: string; message: string }> } | null | undefined)?.issues ?? [];
  const detail = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  return new CommandError(`${t.refused(status, error)}${detail ? ` (${detail})` : ''}`);
}

/** Why a fetch got no answer, in the words of the system (ECONNREFUSED, ENOTFOUND), else fetch's. */
function networkCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

/** GET or POST on the service, asked in the command's language; the JSON answer, or a CommandError naming the address tried. */
export async function callService<T>(
  command: Pick<ServiceCommand<Record<string, CommandOption>>, 'url' | 'locale'>,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: T }> {
  const t = TEXTS[command.locale];
  const url = `${command.url}${path}`;
  let response: Response;
  try {
    response = await fetch(url, {
      ...init,
      headers: { 'accept-language': command.locale, ...(init.headers as Record<string, string> | undefined) },
    });
  } catch (err) {
    throw new CommandError(t.unreachable(command.url, networkCause(err)));
  }
  try {
    return { status: response.status, body: (await response.json()) as T };
  } catch {
    throw new CommandError(t.notJson(url.split('?')[0]!, response.status));
  }
}

/** Runs a command's main: its exit code, a failure as one line on stderr (exit 1). Exits when the output is written, not before. */
export function runCommand(name: string, main: () => Promise<number | void>): void {
  main().then(
    (code) => {
      process.exitCode = code ?? 0;
    },
    (err: unknown) => {
      process.stderr.write(`${name}: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
