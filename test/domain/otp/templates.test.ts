import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  expiryMinutes,
  htmlToText,
  loadOtpTemplates,
  renderOtpMessage,
  TEMPLATES_DIR,
} from '../../../src/domain/otp/templates';

const input = { code: '012345', ttlSeconds: 300, appName: 'Login <Test>', now: Date.UTC(2031, 5, 1) };

describe('OTP templates', () => {
  const templates = loadOtpTemplates(join(TEMPLATES_DIR, 'it'));

  it('fills every placeholder of the SMS text', () => {
    expect(renderOtpMessage(templates, input).sms).toBe(
      'Login <Test>: il tuo codice di verifica è 012345. Scade tra 5 minuti. Non condividerlo con nessuno.',
    );
  });

  it('fills every placeholder of the HTML mail and escapes the app name', () => {
    const { html } = renderOtpMessage(templates, input);
    expect(html).not.toMatch(/\{\{/);
    expect(html).toContain('012345');
    expect(html).toContain('5 minuti');
    expect(html).toContain('2031');
    expect(html).toContain('Login &lt;Test&gt;');
  });

  it('gives a plain-text part with the code before the year and no markup', () => {
    const { text } = renderOtpMessage(templates, input);
    expect(text).not.toMatch(/\{\{|<\/?(p|td|tr|table|h1|html|body)\b|&\w+;/);
    expect(text.indexOf('012345')).toBeGreaterThan(-1);
    expect(text.indexOf('012345')).toBeLessThan(text.indexOf('2031'));
    expect(text).toContain('Il codice scade tra 5 minuti');
  });

  it('names the app in the subject, never the code', () => {
    const { subject } = renderOtpMessage(templates, input);
    expect(subject).toContain('Login <Test>');
    expect(subject).not.toContain('012345');
  });

  it('refuses at load a template with a placeholder nobody fills', () => {
    const dir = mkdtempSync(join(tmpdir(), 'otp-templates-'));
    writeFileSync(join(dir, 'otp_email.html'), '<p>{{OTP_CODE}} {{FIRST_NAME}}</p>');
    writeFileSync(join(dir, 'otp_sms.txt'), '{{OTP_CODE}}');
    expect(() => loadOtpTemplates(dir)).toThrow(/FIRST_NAME/);
  });

  it('refuses at load a template without the code', () => {
    const dir = mkdtempSync(join(tmpdir(), 'otp-templates-'));
    writeFileSync(join(dir, 'otp_email.html'), '<p>{{OTP_CODE}}</p>');
    writeFileSync(join(dir, 'otp_sms.txt'), 'ciao {{APP_NAME}}');
    expect(() => loadOtpTemplates(dir)).toThrow(/OTP_CODE/);
  });

  it('states the lifetime in whole minutes, rounded down, at least one', () => {
    expect(expiryMinutes(300)).toBe(5);
    expect(expiryMinutes(90)).toBe(1);
    expect(expiryMinutes(20)).toBe(1);
  });

  it('turns block ends into lines and drops head, tags and entities', () => {
    expect(htmlToText('<head><title>x</title></head><p>Uno&nbsp;&amp; due</p><div>tre<br>quattro</div>')).toBe(
      'Uno & due\ntre\nquattro',
    );
  });
});
