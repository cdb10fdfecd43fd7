import { testCtx } from '../../support/context';
import { presentFields, saveProfile } from '../../../src/domain/accounts/profile-save';
import { fakeHolds, fakeIdentity } from './fake-identity';

const { otp } = fakeHolds();

const saved = { code: 0 as const, user: { uid: 'u1' } };
const provider = () => fakeIdentity({ updateIdentity: async () => saved, updateCustom: async () => saved });

describe('saveProfile', () => {
  it('saves each group in its own call, with only the fields that are set', async () => {
    const { identity, calls } = provider();
    const result = await saveProfile({ identity, otp }, testCtx, 'u1', {
      identity: { first_name: 'Mario', last_name: undefined },
      custom: { city: 'Roma', birth_date: undefined },
    });
    expect(calls).toEqual([
      ['updateIdentity', 'u1', { first_name: 'Mario' }],
      ['updateCustom', 'u1', { city: 'Roma' }],
    ]);
    expect(result).toEqual({ identity: saved, custom: saved });
  });

  it('calls the provider only for a group that has fields', async () => {
    const { identity, calls } = provider();
    await expect(
      saveProfile({ identity, otp }, testCtx, 'u1', {
        identity: { email: undefined },
        custom: { birth_date: '1980-02-03' },
      }),
    ).resolves.toEqual({ identity: null, custom: saved });
    expect(calls).toEqual([['updateCustom', 'u1', { birth_date: '1980-02-03' }]]);
  });

  it('changes nothing when nothing is set', async () => {
    const { identity, calls } = provider();
    await expect(saveProfile({ identity, otp }, testCtx, 'u1', {})).resolves.toEqual({ identity: null, custom: null });
    expect(calls).toEqual([]);
  });

  it('sends a null phone (it clears the field), unlike an absent one', async () => {
    const { identity, calls } = provider();
    await saveProfile({ identity, otp }, testCtx, 'u1', { custom: { otp_phone: null } });
    expect(calls).toEqual([['updateCustom', 'u1', { otp_phone: null }]]);
  });
});

describe('saveProfile and a held phone', () => {
  it('ends the hold an email claim left on the account once a phone is on file again, and only then', async () => {
    const { identity } = provider();
    const holds = fakeHolds({ '+393331234567': 'u1', '+393339999999': 'u2' });
    await saveProfile({ identity, otp: holds.otp }, testCtx, 'u1', { custom: { city: 'Roma' } });
    expect(holds.held).toEqual({ '+393331234567': 'u1', '+393339999999': 'u2' });
    await saveProfile({ identity, otp: holds.otp }, testCtx, 'u1', { custom: { otp_phone: '393331234567' } });
    expect(holds.held).toEqual({ '+393339999999': 'u2' });
  });
});

describe('presentFields', () => {
  it('drops undefined and keeps null, empty and false', () => {
    expect(presentFields({ a: undefined, b: null, c: '', d: false })).toEqual({ b: null, c: '', d: false });
  });
});
