import { testCtx } from '../../support/context';
import { testConfig } from '../../support/app';
import {
  ensurePhoneFree,
  phoneBelongsToEmail,
  searchPhone,
  usersWithPhone,
} from '../../../src/domain/accounts/phone-owner';
import type { V3SearchReply, V3User } from '../../../src/clients/identity';
import { fakeHolds, fakeIdentity } from './fake-identity';

const config = testConfig();
const { otp } = fakeHolds();
const PHONE = '+393331234567';
const user = (uid: string, phone: string | number | null, email?: string): V3User => ({
  uid,
  email,
  custom_fields: [{ field_name: 'otp_phone', value: phone }],
});
const reply = (...users: V3User[]): V3SearchReply => ({ code: 0, users });

describe('usersWithPhone', () => {
  it('keeps only users whose stored number is the searched one, however it is written', () => {
    const holders = usersWithPhone(
      reply(
        user('digits', '393331234567'),
        user('number', 393331234567),
        user('national', '333 123 4567'),
        user('other', '393339999999'),
        user('none', null),
      ),
      PHONE,
      'IT',
    );
    expect(holders.map((u) => u.uid)).toEqual(['digits', 'number', 'national']);
  });

  it('binds no stranger when the provider ignored its filter and listed everyone', () => {
    const everyone = reply(user('a', '393330000001'), user('b', '393330000002'), { uid: 'c' });
    expect(usersWithPhone(everyone, PHONE, 'IT')).toEqual([]);
  });

  it('finds nobody for a searched number that does not parse, or a reply without users', () => {
    expect(usersWithPhone(reply(user('a', 'not a phone')), 'not a phone', 'IT')).toEqual([]);
    expect(usersWithPhone({ code: 0, users: null }, PHONE, 'IT')).toEqual([]);
  });
});

describe('searchPhone', () => {
  it('searches the provider by the stored digits (no plus) and answers the raw reply with the real holders', async () => {
    const answer = reply(user('a', '393331234567'), user('b', '393330000000'));
    const { identity, calls } = fakeIdentity({ searchByPhone: async () => answer });
    const found = await searchPhone({ identity, config }, testCtx, PHONE);
    expect(calls).toEqual([['searchByPhone', '393331234567']]);
    expect(found.reply).toBe(answer);
    expect(found.holders.map((u) => u.uid)).toEqual(['a']);
  });
});

describe('ensurePhoneFree', () => {
  it('refuses a phone another account holds with phone_taken', async () => {
    const { identity } = fakeIdentity({ searchByPhone: async () => reply(user('someone-else', '393331234567')) });
    await expect(ensurePhoneFree({ identity, config, otp }, testCtx, PHONE, 'me')).rejects.toMatchObject({
      reason: 'phone_taken',
    });
    await expect(ensurePhoneFree({ identity, config, otp }, testCtx, PHONE)).rejects.toMatchObject({
      reason: 'phone_taken',
    });
  });

  it('lets an account keep the phone it holds itself, and anyone take a phone nobody holds', async () => {
    const mine = fakeIdentity({ searchByPhone: async () => reply(user('me', '393331234567')) });
    await expect(
      ensurePhoneFree({ identity: mine.identity, config, otp }, testCtx, PHONE, 'me'),
    ).resolves.toBeUndefined();
    const free = fakeIdentity({ searchByPhone: async () => reply(user('other', '393330000000')) });
    await expect(
      ensurePhoneFree({ identity: free.identity, config, otp }, testCtx, PHONE, 'me'),
    ).resolves.toBeUndefined();
  });

  it('refuses a phone an email claim holds for another account, and gives it back to that account', async () => {
    const nobody = fakeIdentity({ searchByPhone: async () => reply() });
    const holds = fakeHolds({ [PHONE]: 'owner' });
    const deps = { identity: nobody.identity, config, otp: holds.otp };
    await expect(ensurePhoneFree(deps, testCtx, PHONE, 'registrant')).rejects.toMatchObject({ reason: 'phone_taken' });
    await expect(ensurePhoneFree(deps, testCtx, PHONE)).rejects.toMatchObject({ reason: 'phone_taken' });
    await expect(ensurePhoneFree(deps, testCtx, PHONE, 'owner')).resolves.toBeUndefined();
  });

  it('lets a failed search fail the save rather than pass it', async () => {
    const { identity } = fakeIdentity({ searchByPhone: async () => Promise.reject(new Error('down')) });
    await expect(ensurePhoneFree({ identity, config, otp }, testCtx, PHONE, 'me')).rejects.toThrow('down');
  });
});

describe('phoneBelongsToEmail', () => {
  it('is true when the holder of the phone has that email, whatever its case and spaces', async () => {
    const { identity } = fakeIdentity({
      searchByPhone: async () => reply(user('a', '393331234567', ' Mario@Example.com ')),
    });
    await expect(phoneBelongsToEmail({ identity, config }, testCtx, PHONE, 'mario@example.COM')).resolves.toBe(true);
  });

  it('is false when the email is another account’s, or belongs to a listed user with another phone', async () => {
    const { identity } = fakeIdentity({
      searchByPhone: async () =>
        reply(
          user('holder', '393331234567', 'holder@example.com'),
          user('stranger', '393330000000', 'victim@example.com'),
        ),
    });
    await expect(phoneBelongsToEmail({ identity, config }, testCtx, PHONE, 'victim@example.com')).resolves.toBe(false);
  });

  it('is false when the holder has no email', async () => {
    const { identity } = fakeIdentity({ searchByPhone: async () => reply(user('a', '393331234567')) });
    await expect(phoneBelongsToEmail({ identity, config }, testCtx, PHONE, 'mario@example.com')).resolves.toBe(false);
  });
});
