import { toArticle, truncate } from '../../../src/actions/content/article';

describe('truncate', () => {
  it('leaves a text within the limit as it is, whitespace folded', () => {
    expect(truncate('  Breve   testo. ', 160)).toBe('Breve testo.');
  });

  it('cuts at the last whole word and ends with an ellipsis, within the limit', () => {
    const text = 'uno due tre quattro cinque sei sette';
    const cut = truncate(text, 20);
    expect(cut).toBe('uno due tre quattro…');
    expect(cut.length).toBeLessThanOrEqual(20);
  });

  it('keeps a word that ends exactly at the limit', () => {
    expect(truncate('abcd efgh ijkl', 10)).toBe('abcd efgh…');
  });

  it('drops punctuation left before the ellipsis', () => {
    expect(truncate('Prima frase, seconda parte lunga', 15)).toBe('Prima frase…');
  });

  it('cuts a single overlong word hard', () => {
    expect(truncate('x'.repeat(30), 10)).toBe(`${'x'.repeat(9)}…`);
  });
});

describe('article', () => {
  it('prefers og-description over description', () => {
    expect(toArticle({ url: 'u', metadata: { 'og-description': 'og', description: 'plain' } }, 160)?.description).toBe('og');
  });

  it('falls back to description, click_url to url, and empty strings for the rest', () => {
    expect(toArticle({ url: 'u', metadata: { description: 'plain' } }, 160)).toEqual({ title: '', url: 'u', thumbnail: '', click_url: 'u', description: 'plain' });
  });

  it('carries the optional fields only when the upstream sent them, from metadata or the item', () => {
    const article = toArticle({ url: 'u', author: 'A', metadata: { 'og-title': 'T', keyword: ['k'], createtime: null } }, 160);
    expect(article).toEqual({ title: 'T', url: 'u', thumbnail: '', click_url: 'u', description: '', author: 'A', keyword: ['k'] });
  });

  it('is no article without a url', () => {
    expect(toArticle({ metadata: { 'og-title': 'T' } }, 160)).toBeUndefined();
  });
});
