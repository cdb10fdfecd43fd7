import { testCtx } from '../support/context';
import { createServer } from 'node:net';
import pino from 'pino';
import { createMailer } from '../../src/clients/mailer';
import { isApiError } from '../../src/core/errors';
import { startSmtpServer, type CapturedMail } from '../../src/sandbox/smtp';
import { testConfig } from '../support/app';

const log = pino({ level: 'silent' });

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('mailer', () => {
  const received: CapturedMail[] = [];
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  beforeAll(async () => {
    smtp = await startSmtpServer((mail) => received.push(mail));
  });
  afterAll(async () => {
    await smtp.close();
  });

  it('delivers an HTML mail with its plain-text part over SMTP', async () => {
    const config = testConfig({
      mail: { host: '127.0.0.1', port: smtp.port, from_address: 'otp@example.test', from_name: 'Login' },
    });
    const mailer = createMailer(config, log);
    try {
      await mailer.send(testCtx, {
        to: 'mario@example.test',
        subject: 'Il tuo codice è pronto',
        html: '<p>Codice <b>012345</b></p>',
        text: 'Codice 012345',
      });
    } finally {
      await mailer.close();
    }
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({
      from: 'otp@example.test',
      to: ['mario@example.test'],
      subject: 'Il tuo codice è pronto',
      text: 'Codice 012345',
    });
    expect(received[0]!.html).toContain('<b>012345</b>');
  });

  it('turns an unreachable SMTP server into upstream_error', async () => {
    const config = testConfig({
      mail: { host: '127.0.0.1', port: await closedPort(), from_address: 'otp@example.test', timeout_seconds: 2 },
    });
    const mailer = createMailer(config, log);
    const failure = await mailer
      .send(testCtx, { to: 'mario@example.test', subject: 's', html: '<p>x</p>', text: 'x' })
      .catch((err: unknown) => err);
    await mailer.close();
    expect(isApiError(failure) && failure.reason).toBe('upstream_error');
  });

  it('is configured only when from_address is set', () => {
    expect(createMailer(testConfig({ mail: { host: 'smtp.example.test' } }), log).configured).toBe(false);
    expect(createMailer(testConfig({ mail: { from_address: 'otp@example.test' } }), log).configured).toBe(true);
  });
});
