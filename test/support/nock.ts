import nock from 'nock';

/**
 * Upstreams faked with nock for the file or describe block that calls it: no real network but
 * loopback (supertest, local servers), and every interceptor and delayed reply gone after each
 * test so one test's fake never answers another's call.
 */
export function useNock(): void {
  beforeAll(() => {
    nock.disableNetConnect();
    nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  });
  afterEach(() => {
    nock.abortPendingRequests();
    nock.cleanAll();
  });
  afterAll(() => nock.enableNetConnect());
}
