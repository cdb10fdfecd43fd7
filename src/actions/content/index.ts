import type { Action } from '../action';
import { newsletterFeed } from './newsletter-feed';
import { newsletterSubscribe } from './newsletter-subscribe';
import { recommendations } from './recommendations';

export const contentActions: Action[] = [newsletterSubscribe, newsletterFeed, recommendations] as Action[];
