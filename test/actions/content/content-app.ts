import request from 'supertest';
import { deepMerge } from '../../../src/core/config/load';
import type { DepsOverrides } from '../../../src/domain/deps';
import { testApp, testConfig, testDeps } from '../../support/app';
export { useNock } from '../../support/nock';

type Tree = Record<string, unknown>;

export const ESP = 'http://esp.test';
export const FEEDS_HOST = 'http://feeds.test';
export const RECO = 'http://reco.test';

/** Keys long enough to be masked to their last 4 characters; head_d has none on purpose. */
export const KEYS = { head_a: 'key-head-a-0001', head_b: 'key-head-b-0002', head_c: 'key-head-c-0003' };

const base: Tree = {
  newsletter: { esp_url: ESP, feed_base_url: `${FEEDS_HOST}/nl`, api_keys: KEYS, timeout_seconds: 1 },
  recommendations: {
    api_url: `${RECO}/widget`,
    widget_id_home: 'w-home',
    widget_id_article: 'w-article',
    widget_id_home_toptrend: 'w-home-tt',
    widget_id_article_toptrend: 'w-article-tt',
  },
};

/** The real app with the content upstreams pointed at nock hosts; `config` is merged over them. */
export function contentApp(config: Tree = {}, deps: DepsOverrides = {}) {
  const built = testDeps(testConfig(deepMerge(base, config)), deps);
  const server = testApp(built).callback();
  return {
    deps: built,
    post: (action: string, body: unknown = {}) =>
      request(server)
        .post(`/?action=${action}`)
        .send(body as object),
  };
}
