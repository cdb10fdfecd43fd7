import { testCtx } from '../../support/context';
import { testConfig, testDeps } from '../../support/app';
import { claimAccountByProvenEmail, withoutPhone } from '../../../src/domain/accounts/email-claim';
import type { IdentityClient, IdentityProfile, V3User } from '../../../src/clients/identity';
import type { Deps } from '../../../src/domain/deps';
import { fakeIdentity } from './fake-identity';

const phoneField = { field_name: 'otp_phone', value: '393331234567' };
const found = (state: string | null | undefined, custom_fields: IdentityProfile['custom_fields'] = []): IdentityProfile => ({
  uid: 'u1',
  email: 'owner@example.com',
  email_confirmation_state: state,
  custom_fields,
});
const updated = { code: 0 as const, user: { uid: 'u1' } };

let deps: Deps;
afterEach(() => deps?.close());

/** The claim over a fake provider; `order` lists the provider calls and the OTP store's claim mark as they happened. */
function claimWith(answers: Partial<IdentityClient> = {}) {
  const order: string[] = [];
  const { identity, calls } = fakeIdentity({
    updateCustom: async () => (order.push('updateCustom'), updated),
    confirmDoi: async () => (order.push('confirmDoi'), {}),
    ...answers,
  });
  deps = testDeps(testConfig(), { identity });
  const mark = deps.otp.markAccountClaimed.bind(deps.otp);
  deps.otp.markAccountClaimed = async (uid) => {
    order.push('markAccountClaimed');
    await mark(uid);
  };
  const claim = (profile: IdentityProfile, user: V3User | null = null) => claimAccountByProvenEmail(deps, testCtx, profile, user);
  return { claim, calls, order };
}

describe('claimAccountByProvenEmail', () => {
  it('leaves a confirmed account, or one whose state the provider does not say, untouched', async () => {
    const { claim, calls } = claimWith();
    await expect(claim(found('Confirmed', [phoneField]))).resolves.toEqual({ claimed: false, droppedPhone: false });
    await expect(claim(found(undefined, [phoneField]))).resolves.toEqual({ claimed: false, droppedPhone: false });
    await expect(claim(found(null, [phoneField]))).resolves.toEqual({ claimed: false, droppedPhone: false });
    expect(calls).toEqual([]);
    await expect(deps.otp.accountClaimedAt('u1')).resolves.toBeNull();
  });

  it('voids the registrant’s proofs first, then drops the phone they attached and confirms the email', async () => {
    const { claim, calls, order } = claimWith();
    await expect(claim(found('unconfirmed', [phoneField, { field_name: 'city', value: 'Roma' }]))).resolves.toEqual({ claimed: true, droppedPhone: true });
    expect(order).toEqual(['markAccountClaimed', 'updateCustom', 'confirmDoi']);
    expect(calls).toEqual([
      ['updateCustom', 'u1', { otp_phone: null }],
      ['confirmDoi', 'u1'],
    ]);
    await expect(deps.otp.accountClaimedAt('u1')).resolves.toEqual(expect.any(Number));
  });

  it('drops a phone the user profile shows even when users/get does not', async () => {
    const { claim, calls } = claimWith();
    const user: V3User = { uid: 'u1', custom_fields: [phoneField] };
    await expect(claim(found('pending'), user)).resolves.toEqual({ claimed: true, droppedPhone: true });
    expect(calls[0]).toEqual(['updateCustom', 'u1', { otp_phone: null }]);
  });

  it('only confirms an unconfirmed account that has no phone', async () => {
    const { claim, calls } = claimWith();
    await expect(claim(found('pending'))).resolves.toEqual({ claimed: true, droppedPhone: false });
    expect(calls).toEqual([['confirmDoi', 'u1']]);
  });

  it('keeps the registrant’s proofs void when dropping the phone fails', async () => {
    const { claim } = claimWith({ updateCustom: async () => Promise.reject(new Error('provider down')) });
    await expect(claim(found('pending', [phoneField]))).rejects.toThrow('provider down');
    await expect(deps.otp.accountClaimedAt('u1')).resolves.toEqual(expect.any(Number));
  });
});

describe('withoutPhone', () => {
  it('removes otp_phone, named either way, and keeps every other field', () => {
    const profile = { uid: 'u1', custom_fields: [phoneField, { name: 'otp_phone', value: '1' }, { field_name: 'city', value: 'Roma' }] };
    expect(withoutPhone(profile)).toEqual({ uid: 'u1', custom_fields: [{ field_name: 'city', value: 'Roma' }] });
    expect(profile.custom_fields).toHaveLength(3);
  });

  it('leaves a profile without custom fields as it was', () => {
    expect(withoutPhone({ uid: 'u1', custom_fields: null })).toEqual({ uid: 'u1', custom_fields: null });
    const bare: { uid: string; custom_fields?: null } = { uid: 'u1' };
    expect(withoutPhone(bare)).toEqual({ uid: 'u1', custom_fields: undefined });
  });
});
