import type { SandboxFake } from './fake';
import { createCaptchaFake } from './captcha';
import { createCollectorFake } from './collector';
import { createFeedsFake } from './feeds';
import { createIdentityFake } from './identity';
import { createMailingListFake } from './mailing-list';
import { createRecommendationsFake } from './recommendations';
import { createSmsFake } from './sms';
import { createSmtpFake } from './smtp';
import { createTwilioFake } from './twilio';
import { createWhatsAppFake } from './whatsapp';

/** Every fake upstream the sandbox starts. Each upstream's module adds itself here. */
export const sandboxFakes: Array<() => SandboxFake> = [
  createSmsFake,
  createTwilioFake,
  createWhatsAppFake,
  createSmtpFake,
  createMailingListFake,
  createFeedsFake,
  createRecommendationsFake,
  createIdentityFake,
  createCollectorFake,
  createCaptchaFake,
];
