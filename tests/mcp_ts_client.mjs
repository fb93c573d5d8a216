// Drive mdvault's MCP server with the official TypeScript SDK (@modelcontextprotocol/sdk).
//
//   node mcp_ts_client.mjs VAULT_ROOT http URL KEY          # streamable HTTP, bearer KEY
//   node mcp_ts_client.mjs VAULT_ROOT stdio MDVAULT ARG...  # spawn `MDVAULT ARG...` (mcp ...)
//
// scripts/mcp-ts-sdk.sh installs the SDK pinned, copies this file beside its node_modules and
// runs it once per transport on a vault it prepared (the fixture vault, 250 generated notes
// under Bulk/ so that resources/list takes several pages, a template, a note with a broken
// link and a 2048x512 PNG at Home/boiler.png). VAULT_ROOT is that vault on disk, so the listing
// can be checked against the files themselves.
//
// Checks, each printed as `pass NAME` or `FAIL NAME: why`:
//   - tools: every tool of tools/list is called (a tool without a case below fails, so a new
//     tool cannot go untested). The SDK's Client validates each result's structuredContent
//     against the tool's outputSchema inside callTool (dist/esm/client/index.js: callTool runs
//     the validator cacheToolMetadata compiled from listTools, and throws on a typed tool's
//     success without structuredContent or with content that does not fit); its validator is
//     wrapped here to count that it really ran. Each result is then validated again with Ajv
//     (the copy the SDK depends on) in strict mode with the schema itself checked. A refusal
//     of a typed tool must be isError with no structuredContent.
//   - resources: the template, every page of resources/list to the last cursor (each file of
//     the vault exactly once), a note read as text/markdown, the image as a scaled PNG blob, a
//     missing note refused with -32002.
//   - completion: the template's vault and path arguments, a prompt's path, heading and
//     template arguments.
//   - prompts: each prompt of prompts/list got with valid arguments (a prompt without a case
//     fails), non-empty messages that say what the vault holds.
//
// Exit status 0 when every check passes, 1 when one fails, 2 when the client cannot connect.

import fs from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { LATEST_PROTOCOL_VERSION, McpError } from '@modelcontextprotocol/sdk/types.js';
import Ajv from 'ajv';
import Ajv2019 from 'ajv/dist/2019.js';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const TEMPLATE = 'mdvault://{vault}/{+path}';
const VAULT = 'fixture';

// Every tool, with arguments that succeed on the prepared vault. Writes stay under TS/, so
// the notes the other checks read are left alone; the last write deletes what the first made.
// Fields are asserted only through the server's own outputSchema, never one by one, so a field
// added to a result (or an optional argument added to a tool) does not break a case.
const CALLS = [
  ['vault_search', { query: 'boiler pressure', k: 2 }],
  ['vault_read', { path: 'Home/Boiler.md', section: 'Settings' }],
  ['vault_list', { path: 'Home' }],
  ['vault_map', { path: 'Home/Boiler.md' }],
  ['vault_status', {}],
  ['vault_expiries', { untracked: true }],
  ['vault_callouts', {}],
  ['vault_tags', {}],
  ['vault_tags', { tag: 'renewal' }],
  ['vault_tag_rename', { from: 'renewal', to: 'renewals', dry_run: true }],
  ['vault_maintenance', {}],
  ['vault_maintenance', { list_only: true }],
  ['vault_grep', { pattern: 'bar', limit: 3 }],
  ['vault_links', { path: 'Home/Boiler.md' }],
  ['vault_frontmatter_query', { key: 'tags', value: 'renewal' }],
  ['vault_reindex', {}],
  ['vault_create_folder', { path: 'TS/Empty' }],
  ['vault_delete_folder', { path: 'TS/Empty' }],
  ['vault_write', { path: 'TS/Typed.md', content: '---\ntitle: Typed\n---\n# Typed\n\nbody\n' }],
  ['vault_append', { path: 'TS/Typed.md', content: '- one' }],
  ['vault_set_body', { path: 'TS/Typed.md', content: '# Typed\n\nnew body\n' }],
  ['vault_set_frontmatter', { path: 'TS/Typed.md', key: 'rating', value: 4 }],
  ['vault_set_frontmatter', { path: 'TS/Typed.md', key: 'tags', add: ['a', 'b'] }],
  ['vault_replace_text', { path: 'TS/Typed.md', find: 'new body', replace: 'newer' }],
  ['vault_patch', { path: 'TS/Typed.md', target: 'Typed', operation: 'append', content: 'x' }],
  ['vault_move', { source: 'TS/Typed.md', destination: 'TS/Moved.md' }],
  ['vault_delete', { path: 'TS/Moved.md' }],
];

// Calls the server must refuse: an error result, and no structuredContent even from a tool
// that declares an outputSchema (a strict client would validate it and fail).
const REFUSALS = [
  ['vault_read', { path: 'Home/No such note.md' }],
  ['vault_map', { path: 'Home/No such note.md' }],
  ['vault_patch', { path: 'Home/Boiler.md', target: 'No such heading', operation: 'replace', content: 'x' }],
];

// Every prompt, with valid arguments, and a phrase its text must hold (from the fixture's open
// callout, the prepared broken link and template, the tool a filing is done with).
const PROMPTS = {
  daily_review: [{}, 'Do not overfill'],
  file_document: [{ path: 'Home/Boiler.md' }, 'vault_move'],
  maintenance_pass: [{}, 'Inbox/Broken.md'],
  note_from_template: [{ template: 'Meeting', title: 'Kickoff' }, '# Kickoff'],
};

let passed = 0;
let failed = 0;
function check(name, ok, why) {
  if (ok) {
    passed += 1;
    console.log(`pass ${name}`);
  } else {
    failed += 1;
    console.log(`FAIL ${name}: ${why}`);
  }
}
async function attempt(name, body) {
  try {
    await body();
  } catch (e) {
    check(name, false, `threw ${e?.stack ?? e}`);
  }
}
const show = (v) => JSON.stringify(v)?.slice(0, 400);

// Ajv in strict mode, for the draft the schema names (MCP's default, 2020-12, when it names
// none): unknown keywords, ignored keywords and loose types are errors, and the schema itself
// is validated against its meta-schema.
function strictAjv(schema) {
  const draft = String(schema.$schema ?? '');
  const Kind = draft.includes('draft-07') || draft.includes('draft-06') ? Ajv
    : draft.includes('2019-09') ? Ajv2019 : Ajv2020;
  const ajv = new Kind({ strict: true, allErrors: true, validateSchema: true });
  addFormats(ajv);
  return ajv;
}

// The SDK's own validator, counting the validations callTool asks of it.
class CountingValidator extends AjvJsonSchemaValidator {
  constructor() {
    super();
    this.runs = 0;
  }
  getValidator(schema) {
    const inner = super.getValidator(schema);
    return (input) => {
      this.runs += 1;
      return inner(input);
    };
  }
}

async function tools(client, validator) {
  const listed = (await client.listTools()).tools;
  const schemas = new Map(listed.filter((t) => t.outputSchema).map((t) => [t.name, t.outputSchema]));
  check('tools/list names tools, some with an outputSchema', listed.length > 0 && schemas.size > 0,
    `${listed.length} tools, ${schemas.size} with an outputSchema`);
  const compiled = new Map();
  for (const [name, schema] of schemas) {
    try {
      compiled.set(name, strictAjv(schema).compile(schema));
    } catch (e) {
      check(`${name}: outputSchema compiles under strict Ajv`, false, e.message);
    }
  }
  const names = new Set(listed.map((t) => t.name));
  for (const name of new Set(CALLS.map(([n]) => n))) {
    check(`${name}: a case names a listed tool`, names.has(name), 'not in tools/list');
  }
  for (const name of names) {
    check(`${name}: has a case`, CALLS.some(([n]) => n === name),
      'tools/list names it but no case calls it; add one to CALLS');
  }
  for (const [name, args] of CALLS) {
    const label = `${name} ${show(args)}`;
    await attempt(label, async () => {
      const before = validator.runs;
      let result;
      try {
        result = await client.callTool({ name, arguments: args });
      } catch (e) {
        // The SDK throws when structuredContent is missing or does not fit the outputSchema.
        return check(label, false, `the SDK refused the result: ${e.message}`);
      }
      if (result.isError) {
        return check(label, false, `refused: ${show(result.content)}`);
      }
      if (!schemas.has(name)) {
        return check(label, result.content.length > 0, 'no content');
      }
      check(`${label}: structuredContent`, result.structuredContent !== undefined, 'missing');
      check(`${label}: the SDK validated it`, validator.runs === before + 1,
        `the SDK's validator ran ${validator.runs - before} times`);
      const strict = compiled.get(name);
      if (strict && !strict(result.structuredContent)) {
        check(`${label}: strict Ajv`, false,
          `${show(strict.errors)} for ${show(result.structuredContent)}`);
      } else if (strict) {
        check(`${label}: strict Ajv`, true);
      }
    });
  }
  for (const [name, args] of REFUSALS) {
    const label = `${name} refuses ${show(args)}`;
    await attempt(label, async () => {
      const result = await client.callTool({ name, arguments: args });
      check(label, result.isError === true && result.structuredContent === undefined,
        `isError ${result.isError}, structuredContent ${show(result.structuredContent)}`);
    });
  }
}

// The files resources/list must name: every note, document and image outside dot folders.
function filesOnDisk(root) {
  const out = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(md|pdf|png|jpe?g|webp|gif)$/i.test(entry.name)) out.push(path.relative(root, full));
    }
  };
  walk(root);
  return out;
}

function uriOf(rel) {
  // RFC 3986's unreserved characters stay; everything else in a segment is percent-encoded.
  const enc = (s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `mdvault://${VAULT}/${rel.split(path.sep).map(enc).join('/')}`;
}

async function resources(client, root) {
  const templates = (await client.listResourceTemplates()).resourceTemplates;
  check('resources/templates/list', templates.length === 1 && templates[0].uriTemplate === TEMPLATE,
    show(templates));

  const seen = [];
  let cursor;
  let pages = 0;
  do {
    const page = await client.listResources(cursor ? { cursor } : {});
    pages += 1;
    seen.push(...page.resources.map((r) => r.uri));
    cursor = page.nextCursor;
  } while (cursor && pages < 1000);
  check('resources/list pages', pages >= 2, `${pages} page(s) for ${seen.length} resources`);
  const twice = seen.filter((u, i) => seen.indexOf(u) !== i);
  check('resources/list names each resource once', twice.length === 0, `twice: ${show(twice)}`);
  const want = filesOnDisk(root).map(uriOf);
  const missing = want.filter((u) => !seen.includes(u));
  const extra = seen.filter((u) => !want.includes(u));
  check('resources/list names every file of the vault', missing.length === 0 && extra.length === 0,
    `missing ${show(missing)}, not on disk ${show(extra)}`);

  const note = (await client.readResource({ uri: `mdvault://${VAULT}/Home/Boiler.md` })).contents;
  check('resources/read of a note is its Markdown',
    note.length === 1 && note[0].mimeType === 'text/markdown' && note[0].text?.includes('1.3 bar'),
    show(note));

  const image = (await client.readResource({ uri: `mdvault://${VAULT}/Home/boiler.png` })).contents;
  const png = Buffer.from(image[0]?.blob ?? '', 'base64');
  const size = png.length >= 24 ? [png.readUInt32BE(16), png.readUInt32BE(20)] : null;
  check('resources/read of an image is a scaled PNG blob',
    image.length === 1 && image[0].mimeType === 'image/png' && image[0].text === undefined
      && png.subarray(1, 4).toString() === 'PNG' && size?.[0] === 1024 && size?.[1] === 256,
    `${image[0]?.mimeType}, ${png.length} bytes, size ${show(size)}`);

  // Resource-not-found is -32002 up to protocol 2025-11-25 (what this SDK speaks at most, and
  // so negotiates with mdvault); from 2026-07-28 on it is -32602 (SEP-2164).
  const notFound = LATEST_PROTOCOL_VERSION >= '2026-07-28' ? -32602 : -32002;
  try {
    const r = await client.readResource({ uri: `mdvault://${VAULT}/Home/No%20such%20note.md` });
    check('resources/read of a missing note is refused', false, `answered ${show(r)}`);
  } catch (e) {
    check(`resources/read of a missing note is refused with ${notFound}`,
      e instanceof McpError && e.code === notFound && e.message.includes('not_found'),
      `${e.code}: ${e.message}`);
  }
}

async function completion(client) {
  const template = { type: 'ref/resource', uri: TEMPLATE };
  const complete = async (ref, name, value, context) =>
    (await client.complete({ ref, argument: { name, value }, ...(context ? { context: { arguments: context } } : {}) }))
      .completion;

  const vault = await complete(template, 'vault', 'fix');
  check('complete the template\'s vault', show(vault.values) === show([VAULT]), show(vault));

  const home = await complete(template, 'path', 'home/b', { vault: VAULT });
  check('complete a path prefix', home.values[0] === 'Home/Boiler.md' && home.hasMore === false
    && home.total === home.values.length, show(home));

  // 250 generated notes: more than one answer carries, so the total and hasMore say so.
  const bulk = await complete(template, 'path', 'bulk/', { vault: VAULT });
  check('complete a path prefix with more matches than one answer carries',
    bulk.values.length === 100 && bulk.total === 250 && bulk.hasMore === true
      && bulk.values.every((v) => v.startsWith('Bulk/')), `${bulk.values.length} values, total ${bulk.total}, hasMore ${bulk.hasMore}`);

  const file = { type: 'ref/prompt', name: 'file_document' };
  const doc = await complete(file, 'path', 'home/b');
  check('complete a prompt\'s path argument', doc.values[0] === 'Home/Boiler.md', show(doc));

  const heading = await complete(file, 'section', 'sett', { path: 'Home/Boiler.md' });
  check('complete a heading argument from the note the path names',
    show(heading.values) === show(['Boiler::Settings']), show(heading));

  const tmpl = await complete({ type: 'ref/prompt', name: 'note_from_template' }, 'template', 'mee');
  check('complete a prompt\'s template argument', show(tmpl.values) === show(['Meeting']), show(tmpl));
}

async function prompts(client) {
  const listed = (await client.listPrompts()).prompts;
  for (const { name } of listed) {
    check(`prompt ${name}: has a case`, name in PROMPTS, 'prompts/list names it but no case gets it');
  }
  for (const name of Object.keys(PROMPTS)) {
    check(`prompt ${name}: listed`, listed.some((p) => p.name === name), show(listed.map((p) => p.name)));
  }
  for (const [name, [args, phrase]] of Object.entries(PROMPTS)) {
    await attempt(`prompt ${name}`, async () => {
      const got = await client.getPrompt({ name, arguments: args });
      const text = got.messages.map((m) => m.content?.text ?? '').join('\n');
      check(`prompt ${name}`, got.messages.length > 0 && text.includes(phrase),
        `${got.messages.length} messages, no ${show(phrase)} in ${show(text)}`);
    });
  }
}

async function main(argv) {
  const [root, mode, ...rest] = argv;
  let transport;
  if (mode === 'http' && rest.length === 2) {
    transport = new StreamableHTTPClientTransport(new URL(rest[0]), {
      requestInit: { headers: { Authorization: `Bearer ${rest[1]}` } },
    });
  } else if (mode === 'stdio' && rest.length >= 1) {
    // The SDK gives the child a minimal environment; settings travel as MDVAULT_*.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('MDVAULT_')));
    env.PATH = process.env.PATH ?? '';
    env.HOME = process.env.HOME ?? '';
    transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), env, stderr: 'inherit' });
  } else {
    console.error('usage: mcp_ts_client.mjs VAULT_ROOT http URL KEY | VAULT_ROOT stdio MDVAULT ARG...');
    process.exit(2);
  }
  const validator = new CountingValidator();
  const client = new Client({ name: 'mdvault-ts-sdk-test', version: '1.0.0' }, { jsonSchemaValidator: validator });
  try {
    await client.connect(transport);
  } catch (e) {
    console.error(`could not connect: ${e?.stack ?? e}`);
    process.exit(2);
  }
  check('the server is mdvault', client.getServerVersion()?.name === 'mdvault', show(client.getServerVersion()));
  await attempt('tools', () => tools(client, validator));
  await attempt('resources', () => resources(client, root));
  await attempt('completion', () => completion(client));
  await attempt('prompts', () => prompts(client));
  await client.close();
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

await main(process.argv.slice(2));
