import { testCtx } from '../../support/context';
import { testConfig, testDeps } from '../../support/app';
import { claimAccountByProvenEmail, withoutPhone } from '../../../src/domain/accounts/email-claim';
import type { IdentityClient, IdentityProfile, V3User } from '../../../src/clients/identity';
import type { Deps } from '../../../src/domain/deps';
import { fakeIdentity } from './fake-identity';

const phoneField = { field_name: 'otp_phone', value: '393331234567' };
const found = (
  state: string | null | undefined,
  custom_fields: IdentityProfile['custom_fields'] = [],
): IdentityProfile => ({
  uid: 'u1',
  email: 'owner@example.com',
  email_confirmation_state: state,
  custom_fields,
});
const updated = { code: 0 as const, user: { uid: 'u1' } };

let deps: Deps;
afterEach(() => deps?.close());

/** The claim over a fake provider; `order` lists the provider calls and the OTP store's marks as they happened. */
function claimWith(answers: Partial<IdentityClient> = {}) {
  const order: string[] = [];
  let stored: V3User['custom_fields'] = [phoneField];
  const { identity, calls } = fakeIdentity({
    updateCustom: async (_ctx, _uid, fields) => {
      order.push('updateCustom');
      if (fields.otp_phone === null) stored = [];
      return updated;
    },
    // The read-back: what the provider keeps after the update.
    getUser: async () => (order.push('getUser'), { uid: 'u1', custom_fields: stored }),
    confirmDoi: async () => (order.push('confirmDoi'), {}),
    ...answers,
  });
  deps = testDeps(testConfig(), { identity });
  for (const method of ['markAccountClaimed', 'holdPhone'] as const) {
    const original = deps.otp[method].bind(deps.otp) as (...args: unknown[]) => Promise<void>;
    (deps.otp as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      order.push(method);
      await original(...args);
    };
  }
  const claim = (profile: IdentityProfile, user: V3User | null = null) =>
    claimAccountByProvenEmail(deps, testCtx, profile, user);
  return { claim, calls, order };
}

describe('claimAccountByProvenEmail', () => {
  it('leaves a confirmed account, or one whose state the provider does not say, untouched', async () => {
    const { claim, calls } = claimWith();
    await expect(claim(found('Confirmed', [phoneField]))).resolves.toEqual({ claimed: false, heldPhone: null });
    await expect(claim(found(undefined, [phoneField]))).resolves.toEqual({ claimed: false, heldPhone: null });
    await expect(claim(found(null, [phoneField]))).resolves.toEqual({ claimed: false, heldPhone: null });
    expect(calls).toEqual([]);
    await expect(deps.otp.accountClaimedAt('u1')).resolves.toBeNull();
  });

  it('voids the registrant’s proofs first, holds the phone, drops it, reads it back gone, then confirms the email', async () => {
    const { claim, calls, order } = claimWith();
    const user: V3User = { uid: 'u1', custom_fields: [phoneField, { field_name: 'city', value: 'Roma' }] };
    await expect(claim(found('unconfirmed'), user)).resolves.toEqual({ claimed: true, heldPhone: '+393331234567' });
    expect(order).toEqual(['markAccountClaimed', 'holdPhone', 'updateCustom', 'getUser', 'confirmDoi']);
    expect(calls).toEqual([
      ['updateCustom', 'u1', { otp_phone: null }],
      ['getUser', 'u1'],
      ['confirmDoi', 'u1'],
    ]);
    await expect(deps.otp.accountClaimedAt('u1')).resolves.toEqual(expect.any(Number));
    // Held for the account: no one else may add it or log in with it while the owner decides.
    await expect(deps.otp.phoneHeldFor('+393331234567')).resolves.toBe('u1');
    await expect(deps.otp.heldPhoneOf('u1')).resolves.toBe('+393331234567');
  });

  it('reads the profile itself when given only users/get, which may leave the phone out', async () => {
    const { claim, calls } = claimWith();
    await expect(claim(found('pending'))).resolves.toEqual({ claimed: true, heldPhone: '+393331234567' });
    expect(calls[0]).toEqual(['getUser', 'u1']);
    expect(calls[1]).toEqual(['updateCustom', 'u1', { otp_phone: null }]);
  });

  it('only confirms an unconfirmed account that has no phone', async () => {
    const { claim, calls } = claimWith();
    await expect(claim(found('pending'), { uid: 'u1', custom_fields: [] })).resolves.toEqual({
      claimed: true,
      heldPhone: null,
    });
    expect(calls).toEqual([['confirmDoi', 'u1']]);
  });

  it('fails with upstream_error, logged, when the provider keeps the phone it was told to drop, and confirms nothing', async () => {
    const { claim, calls } = claimWith({ getUser: async () => ({ uid: 'u1', custom_fields: [phoneField] }) });
    const errors = jest.spyOn(deps.log, 'error');
    await expect(claim(found('pending'), { uid: 'u1', custom_fields: [phoneField] })).rejects.toMatchObject({
      reason: 'upstream_error',
      data: { endpoint: 'update_profile', check: 'otp_phone_dropped' },
    });
    expect(calls.map(([name]) => name)).toEqual(['updateCustom', 'getUser']);
    expect(errors).toHaveBeenCalledWith(
      expect.objectContaining({ uid: 'u1', read_back: 'otp_phone kept' }),
      expect.any(String),
    );
    // The registrant's proofs stay void and the phone stays held: nothing opens the account to them.
    await expect(deps.otp.accountClaimedAt('u1')).resolves.toEqual(expect.any(Number));
    await expect(deps.otp.phoneHeldFor('+393331234567')).resolves.toBe('u1');
  });

  it('keeps the registrant’s proofs void when dropping the phone fails', async () => {
    const { claim } = claimWith({ updateCustom: async () => Promise.reject(new Error('provider down')) });
    await expect(claim(found('pending'), { uid: 'u1', custom_fields: [phoneField] })).rejects.toThrow('provider down');
    await expect(deps.otp.accountClaimedAt('u1')).resolves.toEqual(expect.any(Number));
  });
});

describe('withoutPhone', () => {
  it('removes otp_phone, named either way, and keeps every other field', () => {
    const profile = {
      uid: 'u1',
      custom_fields: [phoneField, { name: 'otp_phone', value: '1' }, { field_name: 'city', value: 'Roma' }],
    };
    expect(withoutPhone(profile)).toEqual({ uid: 'u1', custom_fields: [{ field_name: 'city', value: 'Roma' }] });
    expect(profile.custom_fields).toHaveLength(3);
  });

  it('leaves a profile without custom fields as it was', () => {
    expect(withoutPhone({ uid: 'u1', custom_fields: null })).toEqual({ uid: 'u1', custom_fields: null });
    const bare: { uid: string; custom_fields?: null } = { uid: 'u1' };
    expect(withoutPhone(bare)).toEqual({ uid: 'u1', custom_fields: undefined });
  });
});
