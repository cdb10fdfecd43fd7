import type { FlowEffects, UserLookupOutput } from '../../machines/effects';
import { STEP } from '../../machines/steps';
import { identityFailure, type V3User, type IdentityProfile } from '../clients/identity';
import type { Deps, ServiceContext } from '../domain/deps';
import type { PhoneChannel } from '../core/config/schema';
import { isApiError } from '../core/errors';
import { issueAccessToken } from '../domain/accounts/tokens';
import { saveProfile } from '../domain/accounts/profile-save';
import { registerAccount } from '../domain/accounts/registration';
import { toE164, toStoredDigits } from '../domain/phone';
import { searchPhone } from '../domain/accounts/phone-owner';
import { reducedProfile } from '../domain/accounts/profile';
import { claimAccount, claimableAccount } from '../domain/accounts/email-claim';
import { reachedOnly } from '../domain/otp/reached';
import type { EffectsSeen } from '../domain/funnel/observer';
import { enrol, enrolOptions, login as passkeyLogin } from '../domain/passkeys/ceremonies';
import { phoneHint } from '../domain/phone';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';

/*
 * The login journey's effects (machines/effects.ts) over the real dependencies: the OTP
 * service, the identity client and the login ingest. Each is the primitive action's call
 * without its HTTP shell, so a flow step and the primitive behave alike: outcomes the machine
 * branches on are returned, anything else (`already_sent`, `upstream_error`, ...) is thrown as
 * the same ApiError the primitive would answer. The clients do not take the AbortSignal: each
 * upstream call is bounded by its own timeout instead.
 */

/** Request field names used when a send is refused for a field (`invalid_request`, `region_not_allowed`). */
export interface SendFieldNames {
  key?: string;
  phone?: string;
  email?: string;
}

/** How this request's code is to be sent: the phone's channel the caller asked for (FeLogin, FeAddPhone `channel`). */
export interface SendChoice {
  channel?: PhoneChannel;
}

/** A user as the flows know it: the phone on file back in E.164 (stored digits may lack the `+`). */
function flowUser(
  user: V3User | IdentityProfile,
  fallback: V3User | IdentityProfile | null,
  region: string,
): UserLookupOutput & { found: true } {
  const profile = reducedProfile(user, fallback);
  const phone = profile.otp_phone ? toE164(profile.otp_phone, region) : null;
  return {
    found: true,
    uid: profile.uid,
    ...(profile.email ? { email: profile.email } : {}),
    ...(phone ? { phone } : {}),
  };
}

/** The code record named the journey of a request that had none: it is that one, not a new one (a proof's journey stays). */
const joinJourney = (seen: EffectsSeen, id: string | undefined) => {
  if (!seen.journey?.fresh || id === undefined || id === seen.journey.id) return;
  seen.journey.id = id;
  seen.journey.fresh = false;
};

/** The effects for one request: every upstream call is made on its behalf (its id, trace and limits). */
export function createFlowEffects(
  deps: Deps,
  ctx: ServiceContext,
  fields: SendFieldNames = {},
  seen: EffectsSeen = {},
  choice: SendChoice = {},
): FlowEffects {
  const region = () => deps.config.sms.default_region;
  return {
    sendOtp: ({ key, phone, email }) =>
      deps.otp.generate(ctx, {
        key,
        phone,
        email,
        ...(choice.channel ? { channel: choice.channel } : {}),
        fields: { key: fields.key ?? 'phone', phone: fields.phone ?? 'phone', email: fields.email ?? 'email' },
        ...(seen.journey ? { journey: { id: seen.journey.id, kept: (id: string) => joinJourney(seen, id) } } : {}),
      }),

    async verifyOtp({ key, code }) {
      const result = await deps.otp.verify(ctx, { key, code });
      joinJourney(seen, result.journey);
      if (result.outcome !== 'ok') return result.outcome;
      // The code screens (14, 33) hand out no proof to time them by: their time runs from the code's issue.
      seen.codeSentAt = result.sentAt;
      // The code vouches for this journey's phone or email only if it was delivered there, and only there (docs/security.md).
      return reachedOnly(result.reached, key) ? 'ok' : 'invalid';
    },

    async searchUserByPhone({ phone, account }) {
      // Asked on behalf of an account ("is this phone free?"), the answer reveals another account: counted.
      if (account !== undefined) await deps.limits.phoneCheck(ctx.ip, account);
      // The first holder whose stored value really is this number (phone-owner.ts); a phone on two accounts logs into the first.
      const { holders } = await searchPhone(deps, ctx, phone);
      const holder = holders[0];
      if (holder) return flowUser(holder, null, region());
      // Dropped by a claim and held while the email's owner decides (email-claim.ts): the held-for account's, to no one else.
      const heldFor = await deps.otp.phoneHeldFor(phone);
      if (heldFor === null || heldFor === account) return { found: false };
      return account === undefined ? { found: false, onHold: true } : { found: true, uid: heldFor };
    },

    async lookupUserByEmail({ email }) {
      // get_user_email's two reads: users/get by email, then user/get for the custom fields users/get may leave out.
      const found = await deps.identity.findUserByEmail(ctx, email);
      if (!found) return { found: false };
      const user = await deps.identity.getUser(ctx, found.uid);
      const account = flowUser(user ?? found, found, region());
      if (claimableAccount(found, user, region()).unconfirmed) account.emailUnconfirmed = true;
      if (account.phone !== undefined) return account;
      const held = await deps.otp.heldPhoneOf(found.uid);
      return held === null ? account : { ...account, phone: held, phoneHeld: true };
    },

    async claimAccount({ uid, phone }) {
      // The machine claims only after a code delivered to the email was accepted and the lookup found it unconfirmed.
      const { heldPhone } = await claimAccount(deps, ctx, { uid, unconfirmed: true, phone: phone ?? null });
      return { heldPhone };
    },

    releasePhone: ({ uid }) => deps.otp.releasePhone(uid),

    async registerUser({ email, consents, is_magic_link_sent }) {
      const { uid } = await registerAccount(deps, ctx, {
        email,
        consents,
        isMagicLinkSent: is_magic_link_sent ?? false,
      });
      if (!uid) {
        // The provider answered without the new user's uid.
        throw identityFailure('register');
      }
      return { uid };
    },

    confirmDoi: ({ uid }) => deps.identity.confirmDoi(ctx, uid),

    async updateProfile({ uid, step, fields: profile }) {
      const identity = { first_name: profile.first_name, last_name: profile.last_name, email: profile.email };
      const custom = {
        city: profile.city,
        birth_date: profile.birth_date,
        otp_phone: profile.otp_phone ? toStoredDigits(profile.otp_phone) : undefined,
      };
      await saveProfile(deps, ctx, uid, step === STEP.identitySaved ? { identity } : { custom });
      // The machine checked the phone against other uids just before (searchUserByPhone): not checked twice.
      return { outcome: 'saved' };
    },

    async issueToken({ uid, stay_logged_in, method }) {
      // The token and its cookie, as access_token issues them.
      const reply = await issueAccessToken(ctx, uid, { stayLoggedIn: stay_logged_in });
      deps.metrics.login(method ?? 'code');
      // The ledger's SMS saved are its passkey logins: counted where every login is, never in the answer's way.
      deps.sms.ledger
        .recordLogin(method ?? 'code')
        .catch((err: unknown) =>
          ctx.log.warn({ err: isApiError(err) ? err.reason : 'error' }, 'sms ledger: could not count a login'),
        );
      return { access_token: reply.access_token, expires_in: reply.expires_in ?? null };
    },

    async verifyPasskey({ passkey_proof, credential }) {
      // PasskeyLogin checked passkeys are on (passkeys_disabled) and counted the try against its limits first.
      const store = await deps.passkeys.store();
      // The action's schema validated the credential's shape; the library verifies the rest.
      const { uid } = await passkeyLogin(ctx, store, {
        passkeyProof: passkey_proof,
        response: credential as AuthenticationResponseJSON,
      });
      ctx.log.info({ event: 'passkey_login', uid }, 'logged in by passkey');
      return { uid };
    },

    async passkeyEnrolOptions({ uid, login, email, phone }) {
      // PasskeyEnrolOptions checked passkeys are on and the login proof (provenLogin) before the machine ran.
      const store = await deps.passkeys.store();
      // What the browser shows beside the passkey: how the person knows the account, not its handle.
      const shown = email ?? (phone ? phoneHint(phone) : 'account');
      const { options, passkeyProof } = await enrolOptions(ctx, store, { uid, jti: login }, shown);
      return { options: options as unknown as Record<string, unknown>, passkey_proof: passkeyProof };
    },

    async enrolPasskey({ uid, login, passkey_proof, credential, name }) {
      const store = await deps.passkeys.store();
      // The action's schema validated the credential's shape; the library verifies the rest.
      const passkey = await enrol(ctx, store, {
        login: { uid, jti: login },
        passkeyProof: passkey_proof,
        response: credential as RegistrationResponseJSON,
        name,
      });
      return { passkey: { ...passkey } };
    },

    async ingestLogin(event) {
      // enqueue never rejects by contract; should one ever, the login still completes.
      await deps.loginIngest
        .enqueue(event)
        .catch((err: unknown) =>
          deps.log.warn(
            { uid: event.uid, err: err instanceof Error ? err.name : 'error' },
            'login ingest enqueue failed',
          ),
        );
    },
  };
}
