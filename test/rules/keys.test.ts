// API key hashes: the one-shot crypto.hash (Node 20.12+) and createHash must
// give the same digest, or keys stored by one Node would not match on another.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { hashApiKey, hashApiKeyHex, newApiKey } from '../../src/rules/keys.js';

test('hashApiKeyHex is the SHA-256 of the key as UTF-8, the same as hashApiKey, for ASCII and non-ASCII keys', () => {
  for (const key of [newApiKey(), 'bench-tenant-0', 'clé-été-日本', '']) {
    const expected = createHash('sha256').update(key, 'utf8').digest('hex');
    assert.equal(hashApiKeyHex(key), expected, key);
    assert.equal(hashApiKey(key).toString('hex'), expected, key);
  }
});
