/*
 * openapi-typescript as a process of its own: the OpenAPI document (JSON) on stdin, the
 * TypeScript types on stdout. Its dependencies are ES modules only, which Jest's CommonJS
 * runtime (test/docs/generated.test.ts renders every generated file) cannot load in-process.
 */
import { stdin, stdout } from 'node:process';
import openapiTS, { astToString } from 'openapi-typescript';

let text = '';
stdin.setEncoding('utf8');
for await (const chunk of stdin) text += chunk;
stdout.write(astToString(await openapiTS(JSON.parse(text))));
