import { customValue, limitedProfileMeta, profileMeta, reducedProfile } from '../../../src/domain/accounts/profile';

const complete = {
  uid: 'u1',
  email: 'mario@example.com',
  first_name: 'Mario',
  last_name: 'Rossi',
  custom_fields: [
    { field_name: 'city', value: 'Roma' },
    { field_name: 'birth_date', value: '1980-02-03' },
    { field_name: 'otp_phone', value: 393331234567 },
  ],
};

describe('reducedProfile', () => {
  it('reads custom fields by field_name or name, as strings, and counts the profile complete only with all five fields', () => {
    const profile = reducedProfile({
      ...complete,
      custom_fields: [{ name: 'city', value: 'Roma' }, ...complete.custom_fields.slice(1)],
    });
    expect(profile).toEqual({
      uid: 'u1',
      email: 'mario@example.com',
      first_name: 'Mario',
      last_name: 'Rossi',
      city: 'Roma',
      birth_date: '1980-02-03',
      otp_phone: '393331234567',
      has_otp_phone: true,
      profile_complete: true,
    });
  });

  it('reads an absent, null or blank value as null, and then neither a phone nor a complete profile', () => {
    const profile = reducedProfile({
      uid: 'u1',
      email: '  ',
      first_name: null,
      custom_fields: [
        { field_name: 'otp_phone', value: ' ' },
        { field_name: 'city', value: null },
      ],
    });
    expect(profile).toMatchObject({
      email: null,
      first_name: null,
      last_name: null,
      city: null,
      otp_phone: null,
      has_otp_phone: false,
      profile_complete: false,
    });
  });

  it('takes what the user lacks from the fallback, and what it has from itself', () => {
    const profile = reducedProfile({ uid: 'u1', first_name: 'Maria', custom_fields: [] }, complete);
    expect(profile).toMatchObject({
      first_name: 'Maria',
      last_name: 'Rossi',
      otp_phone: '393331234567',
      profile_complete: true,
    });
  });

  it('customValue finds nothing in no fields', () => {
    expect(customValue(undefined, 'city')).toBeNull();
    expect(customValue(null, 'city')).toBeNull();
  });
});

describe('profileMeta', () => {
  it('says a missing account does not exist, with no uid and no phone', () => {
    expect(profileMeta(null)).toEqual({
      exists: false,
      uid: null,
      has_otp_phone: false,
      otp_phone: null,
      profile_complete: false,
    });
  });

  it('carries the uid and phone of an account', () => {
    expect(profileMeta(reducedProfile(complete))).toEqual({
      exists: true,
      uid: 'u1',
      has_otp_phone: true,
      otp_phone: '393331234567',
      profile_complete: true,
    });
  });

  it('tells an unverified caller whether the account exists and has a phone, never its uid, phone or completeness', () => {
    const limited = limitedProfileMeta(profileMeta(reducedProfile(complete)));
    expect(limited).toEqual({
      exists: true,
      uid: null,
      has_otp_phone: true,
      otp_phone: null,
      profile_complete: null,
      limited: true,
    });
    expect(JSON.stringify(limited)).not.toContain('3331234567');
  });
});
