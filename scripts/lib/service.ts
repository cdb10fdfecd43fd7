import { parseArgs } from 'node:util';
import { configTree } from '../../src/core/config/load';
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

type Values<O extends Record<string, CommandOption>> = { [K in keyof O]?: O[K]['type'] extends 'boolean' ? boolean : string };

export interface ServiceCommand<O extends Record<string, CommandOption>> {
  /** The service's base URL, no trailing slash. */
  url: string;
  locale: TextLocale;
  values: Values<O>;
}

const TEXTS = {
  it: {
    options: 'Opzioni',
    url: (shown: string) => `il servizio (qui: ${shown}, da CONFIG_FILE, SERVER__HOST e SERVER__PORT come li legge il servizio)`,
    locale: (shown: string) => `la lingua di questo comando, it o en (qui: ${shown}, da LANG o da mail.default_locale)`,
    help: 'questo aiuto',
    unknown: (option: string) => `opzione sconosciuta ${option} (vedi --help)`,
    needsValue: (option: string) => `${option} vuole un valore (vedi --help)`,
    badLocale: (given: string) => `--locale ${given}: it o en`,
    badUrl: (given: string) => `--url ${given}: un indirizzo http(s) come http://127.0.0.1:8080`,
    badServer: (problems: string) => `configurazione del servizio non valida: ${problems}`,
    unreachable: (url: string, why: string) => `nessuna risposta da ${url} (${why}). Il servizio è in ascolto lì? Altrimenti --url, o SERVER__HOST / SERVER__PORT / CONFIG_FILE come li ha il servizio.`,
    notJson: (url: string, status: number) => `${url} ha risposto ${status} senza JSON: è il servizio?`,
  },
  en: {
    options: 'Options',
    url: (shown: string) => `the service (here: ${shown}, from CONFIG_FILE, SERVER__HOST and SERVER__PORT as the service reads them)`,
    locale: (shown: string) => `the language of this command, it or en (here: ${shown}, from LANG or mail.default_locale)`,
    help: 'this help',
    unknown: (option: string) => `unknown option ${option} (see --help)`,
    needsValue: (option: string) => `${option} needs a value (see --help)`,
    badLocale: (given: string) => `--locale ${given}: it or en`,
    badUrl: (given: string) => `--url ${given}: an http(s) address such as http://127.0.0.1:8080`,
    badServer: (problems: string) => `the service's configuration is not valid: ${problems}`,
    unreachable: (url: string, why: string) => `no answer from ${url} (${why}). Is the service listening there? Otherwise --url, or SERVER__HOST / SERVER__PORT / CONFIG_FILE as the service has them.`,
    notJson: (url: string, status: number) => `${url} answered ${status} without JSON: is it the service?`,
  },
} satisfies Record<TextLocale, unknown>;

/** A command's failure, already written in its language: printed as it is. */
export class CommandError extends Error {}

/** The sections of the service's configuration a command reads, validated as the service validates them. */
function serviceSettings(env: NodeJS.ProcessEnv, chosen: TextLocale | undefined): { url: string; locale: string } {
  const tree = configTree({ env });
  const server = configSchema.shape.server.safeParse(tree.server);
  const mail = configSchema.shape.mail.safeParse(tree.mail);
  for (const [name, parsed] of [['server', server], ['mail', mail]] as const) {
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${[name, ...issue.path].join('.')}: ${issue.message}`).join('; ');
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

function helpText<O extends Record<string, CommandOption>>(spec: CommandSpec<O>, locale: TextLocale, url: string): string {
  const t = TEXTS[locale];
  const all: Array<[string, string | undefined, string]> = [
    ...Object.entries(spec.options).map(([name, option]): [string, string | undefined, string] => [name, option.value, option.help[locale]]),
    ['url', '<base>', t.url(url)],
    ['locale', '<it|en>', t.locale(locale)],
    ['help', undefined, t.help],
  ];
  const left = all.map(([name, value]) => `--${name}${value ? ` ${value}` : ''}`);
  const width = Math.max(...left.map((l) => l.length));
  return [spec.usage, '', spec.summary[locale], '', `${t.options}:`, ...all.map(([, , help], i) => `  ${left[i]!.padEnd(width)}  ${help}`)].join('\n');
}

/**
 * Reads a command's arguments: the options it declares plus --url, --locale and --help.
 * `{ help }` is the text to print for --help; otherwise where and how to call the service.
 */
export function readCommand<O extends Record<string, CommandOption>>(spec: CommandSpec<O>, argv: readonly string[], env: NodeJS.ProcessEnv = process.env): { help: string } | ServiceCommand<O> {
  // The language first, so the arguments' errors are written in it too.
  const given = argv.findIndex((a) => a === '--locale' || a.startsWith('--locale='));
  const flagLocale = given === -1 ? undefined : argv[given]!.includes('=') ? argv[given]!.slice('--locale='.length) : argv[given + 1];
  const chosen = flagLocale !== undefined && /^(it|en)$/i.test(flagLocale) ? (flagLocale.toLowerCase() as TextLocale) : terminalLanguage(env);
  const settings = serviceSettings(env, chosen);
  const locale = chosen ?? textLocale(settings.locale);
  const t = TEXTS[locale];

  const options: Record<string, { type: 'string' | 'boolean' }> = { url: { type: 'string' }, locale: { type: 'string' }, help: { type: 'boolean' } };
  for (const [name, option] of Object.entries(spec.options)) options[name] = { type: option.type };
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values as Record<string, string | boolean | undefined>;
  } catch (err) {
    const code = (err as { code?: string }).code;
    const option = /'(-[^']*)'/.exec((err as Error).message)?.[1] ?? argv.find((a) => a.startsWith('-')) ?? '';
    throw new CommandError(code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' ? t.needsValue(option.split(' ')[0]!) : t.unknown(option.split(' ')[0]!));
  }
  if (typeof values.locale === 'string' && !/^(it|en)$/i.test(values.locale)) throw new CommandError(t.badLocale(values.locale));
  if (typeof values.url === 'string' && !/^https?:\/\/[^\s/]+/.test(values.url)) throw new CommandError(t.badUrl(values.url));

  const url = (typeof values.url === 'string' ? values.url : settings.url).replace(/\/+$/, '');
  if (values.help) return { help: helpText(spec, locale, url) };
  const own: Record<string, unknown> = {};
  for (const name of Object.keys(spec.options)) own[name] = values[name];
  return { url, locale, values: own as Values<O> };
}

/** Why a fetch got no answer, in the words of the system (ECONNREFUSED, ENOTFOUND), else fetch's. */
function networkCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

/** GET or POST on the service, asked in the command's language; the JSON answer, or a CommandError naming the address tried. */
export async function callService<T>(command: Pick<ServiceCommand<Record<string, CommandOption>>, 'url' | 'locale'>, path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const t = TEXTS[command.locale];
  const url = `${command.url}${path}`;
  let response: Response;
  try {
    response = await fetch(url, { ...init, headers: { 'accept-language': command.locale, ...(init.headers as Record<string, string> | undefined) } });
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
