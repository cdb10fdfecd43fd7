import type { Action } from '../action';
import { accessToken } from './access-token';
import { doiConfirm } from './doi-confirm';
import { getUser } from './get-user';
import { getUserEmail } from './get-user-email';
import { login } from './login';
import { refreshToken } from './refresh-token';
import { register } from './register';
import { searchUser } from './search-user';
import { updateProfile } from './update-profile';
import { userAccessList } from './user-access-list';

export const identityActions: Action[] = [
  searchUser,
  getUserEmail,
  getUser,
  login,
  register,
  updateProfile,
  doiConfirm,
  accessToken,
  refreshToken,
  userAccessList,
] as Action[];
