import { z } from 'zod';

/*
 * Guards of the identity provider's replies (docs/identity.md#reply-shapes-assumed-and-where-they-come-from). Objects are loose: extra fields
 * are kept (raw results are passed through) and every field not known to be present is
 * optional. Two failure styles: `/id/api/v1` answers `error_code_list` (even under HTTP 200),
 * `/api/v3` answers `code != 0` (2004: user not found).
 */

const scalar = z.union([z.string(), z.number(), z.boolean()]);

/** `{ field_name, value }`; users/get may say `name` instead of `field_name`. Values are strings, even for NUMBER fields. */
const customField = z.looseObject({
  field_name: z.string().optional(),
  name: z.string().optional(),
  value: scalar.nullish(),
});

const personFields = {
  uid: z.string().min(1),
  email: z.string().nullish(),
  first_name: z.string().nullish(),
  last_name: z.string().nullish(),
  custom_fields: z.array(customField).nullish(),
};

/** v3 user (user/get, user/update, user/search entries). */
const v3User = z.looseObject(personFields);

/** identity users/get: a flat profile. */
export const identityProfile = z.looseObject({ ...personFields, email_confirmation_state: z.string().nullish() });

export const v1Error = z.looseObject({
  error_code_list: z.array(z.looseObject({ code: scalar.nullish(), message: z.string().nullish() })).min(1),
});

export const v3Failure = z.looseObject({
  code: z.number().refine((code) => code !== 0, 'code 0 is success'),
  message: z.string().nullish(),
});

export const tokenReply = z.looseObject({
  access_token: z.string().min(1),
  token_type: z.string().nullish(),
  refresh_token: z.string().nullish(),
  expires_in: z.number().nullish(),
  email_confirmation_required: z.boolean().nullish(),
  pub_id: z.string().nullish(),
});

/** Login and register may answer without a token (magic link, DOI pending): the token is optional there. */
export const loginReply = tokenReply.extend({ access_token: z.string().nullish() });

export const oauthError = z.looseObject({ error: z.string().min(1), error_description: z.string().nullish() });

export const v3UserReply = z.looseObject({ code: z.literal(0), user: v3User });

export const v3SearchReply = z.looseObject({
  code: z.literal(0),
  total: z.number().nullish(),
  count: z.number().nullish(),
  offset: z.number().nullish(),
  limit: z.number().nullish(),
  users: z.array(v3User).nullish(),
});

const access = z.looseObject({
  access_id: z.string().min(1),
  granted: z.boolean().nullish(),
  resource: z.looseObject({ rid: z.string(), name: z.string().nullish() }).nullish(),
});

/** The key holding the list is not confirmed by any public model: `data` and `accesses` are both seen. */
export const accessListReply = z.looseObject({
  code: z.literal(0),
  data: z.array(access).nullish(),
  accesses: z.array(access).nullish(),
});

export type CustomField = z.infer<typeof customField>;
export type V3User = z.infer<typeof v3User>;
export type IdentityProfile = z.infer<typeof identityProfile>;
export type ProviderError = z.infer<typeof v1Error>['error_code_list'][number];
export type TokenReply = z.infer<typeof tokenReply>;
export type LoginReply = z.infer<typeof loginReply>;
export type V3UserReply = z.infer<typeof v3UserReply>;
export type V3SearchReply = z.infer<typeof v3SearchReply>;
export type AccessListReply = z.infer<typeof accessListReply>;
