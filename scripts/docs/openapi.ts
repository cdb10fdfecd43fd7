import { createOpenApiDocument } from '../../src/http/openapi';
import type { DocGenerator } from './generator';

/** docs/openapi.json: the committed copy of what GET /openapi.json serves. */
export const openapiDoc: DocGenerator = {
  path: 'docs/openapi.json',
  render: () => `${JSON.stringify(createOpenApiDocument(), null, 2)}\n`,
};
