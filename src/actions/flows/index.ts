import type { Action } from '../action';
import { feAddPhone } from './fe-add-phone';
import { feLogin } from './fe-login';
import { feRegister } from './fe-register';
import { feUpdateProfile } from './fe-update-profile';
import { feVerifyOtp } from './fe-verify-otp';

/** The optimised actions: each one event of the login machine (src/flows, docs/flows-http.md). */
export const flowsActions: Action[] = [feLogin, feVerifyOtp, feRegister, feAddPhone, feUpdateProfile] as Action[];
