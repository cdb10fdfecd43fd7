/** A distinct E.164-like mobile number per index, so every request of a load hits its own OTP key. */
export const phoneOf = (prefix: string, index: number) => `${prefix}${String(index).padStart(8, '0')}`;
