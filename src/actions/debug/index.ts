import type { Action } from '../action';
import { loginIngestionUserCollector } from './login-ingestion-user-collector';
import { testMail } from './test-mail';
import { testSms } from './test-sms';

export const debugActions: Action[] = [testMail, testSms, loginIngestionUserCollector] as Action[];
