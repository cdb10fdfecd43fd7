import type { Action } from '../action';
import { otpGenerate } from './otp-generate';
import { otpVerifyLocal } from './otp-verify-local';
import { verifyOtp } from './verify-otp';

export const otpActions: Action[] = [otpGenerate, verifyOtp, otpVerifyLocal] as Action[];
