import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { SandboxFake } from './fake';
import { codeIn } from './sms';

/*
 * A real SMTP server on a free loopback port (smtp-server): the service's mailer talks SMTP to
 * it exactly as to a production relay. Each mail lands in the outbox (channel `email`) with its
 * subject and plain-text part. Tests start it too, to read codes out of delivered mail.
 */

export interface ParsedMail {
  subject: string;
  text: string;
  html: string;
}

function decodeWords(header: string): string {
  return header.replace(
    /=\?([^?]+)\?([BbQq])\?([^?]*)\?=\s*/g,
    (_, _charset: string, encoding: string, data: string) =>
      encoding.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : decodeQuotedPrintable(data.replace(/_/g, ' ')),
  );
}

function decodeQuotedPrintable(body: string): string {
  const bytes = body
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

function splitEntity(raw: string): { headers: Map<string, string>; body: string } {
  const at = raw.search(/\r?\n\r?\n/);
  const head = at === -1 ? raw : raw.slice(0, at);
  const body = at === -1 ? '' : raw.slice(at).replace(/^\r?\n\r?\n/, '');
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body };
}

function decodeBody(headers: Map<string, string>, body: string): string {
  const encoding = (headers.get('content-transfer-encoding') ?? '').toLowerCase();
  const decoded =
    encoding === 'base64'
      ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
      : encoding === 'quoted-printable'
        ? decodeQuotedPrintable(body)
        : body;
  // SMTP lines end in CRLF; people and tests read LF.
  return decoded.replace(/\r\n/g, '\n');
}

/** Enough MIME for what nodemailer sends: subject, and the text and HTML parts (nested multiparts included). */
export function parseMail(raw: string): ParsedMail {
  const { headers, body } = splitEntity(raw);
  const parsed: ParsedMail = { subject: decodeWords(headers.get('subject') ?? ''), text: '', html: '' };
  const visit = (entityHeaders: Map<string, string>, entityBody: string) => {
    const type = entityHeaders.get('content-type') ?? 'text/plain';
    const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
    if (/^multipart\//i.test(type) && boundary) {
      for (const part of entityBody.split(`--${boundary}`).slice(1)) {
        if (part.startsWith('--')) break;
        const entity = splitEntity(part.replace(/^\r?\n/, ''));
        visit(entity.headers, entity.body);
      }
    } else if (/^text\/html/i.test(type)) {
      parsed.html ||= decodeBody(entityHeaders, entityBody).trim();
    } else if (/^text\/plain/i.test(type)) {
      parsed.text ||= decodeBody(entityHeaders, entityBody).trim();
    }
  };
  visit(headers, body);
  return parsed;
}

export interface CapturedMail extends ParsedMail {
  from: string;
  to: string[];
}

/** A real SMTP server on 127.0.0.1 and a free port; `onMail` sees every accepted mail. */
export async function startSmtpServer(
  onMail: (mail: CapturedMail) => void,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    size: 1024 * 1024,
    // Pooled clients keep connections open; a closing server waits this long, not 30 s, before dropping them.
    closeTimeout: 500,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const mail = parseMail(Buffer.concat(chunks).toString('utf8'));
        const envelope = session.envelope;
        onMail({
          ...mail,
          from: envelope.mailFrom ? envelope.mailFrom.address : '',
          to: envelope.rcptTo.map((r) => r.address),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const SANDBOX_MAIL_FROM = 'no-reply@sandbox.invalid';

export function createSmtpFake(): SandboxFake {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>> | undefined;
  return {
    name: 'smtp',
    async start({ outbox }) {
      smtp = await startSmtpServer((mail) => {
        for (const to of mail.to)
          outbox.add({ channel: 'email', to, subject: mail.subject, body: mail.text, code: codeIn(mail.text) });
      });
      return {
        mail: {
          host: '127.0.0.1',
          port: smtp.port,
          secure: false,
          user: '',
          pass: '',
          from_address: SANDBOX_MAIL_FROM,
        },
      };
    },
    async close() {
      await smtp?.close();
    },
  };
}
