import type { Action } from '../action';

export const otpActions: Action[] = [];
