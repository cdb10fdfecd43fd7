import nock from 'nock';
import { mailConfig, smsGateway, startApp, useNock, useSmtp, type Harness } from './harness';

describe('OTP under concurrency', () => {
  useNock();
  const smtp = useSmtp();
  let app: Harness;
  afterEach(async () => {
    await app.close();
  });

  it('sends exactly one SMS code for 20 concurrent otp_generate calls on one fresh key', async () => {
    app = await startApp();
    const gateway = smsGateway();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => app.post('otp_generate', { uid: '+393339876543' })),
    );
    expect(gateway.sent).toHaveLength(1);
    expect(answers.filter((r) => r.body.success)).toHaveLength(1);
    expect(answers.filter((r) => r.body.data.reason === 'already_sent')).toHaveLength(19);
  });

  it('delivers exactly one mail for 20 concurrent otp_generate calls on one fresh email key', async () => {
    app = await startApp(mailConfig(smtp.port()));
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => app.post('otp_generate', { uid: 'luisa@example.test' })),
    );
    expect(answers.filter((r) => r.body.success)).toHaveLength(1);
    expect(smtp.mails).toHaveLength(1);
  });

  it('accepts exactly one of 20 concurrent verify_otp calls with the right code', async () => {
    app = await startApp();
    const gateway = smsGateway();
    await app.post('otp_generate', { uid: '+393339876543' });
    nock.cleanAll();
    const code = gateway.codes()[0]!;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => app.post('verify_otp', { email: '+393339876543', otp_code: code })),
    );
    expect(answers.filter((r) => r.body.success)).toHaveLength(1);
    expect(answers.filter((r) => r.body.data.reason === 'invalid')).toHaveLength(19);
  });
});
