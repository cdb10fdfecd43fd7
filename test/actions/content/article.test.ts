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
    expect(toArticle({ url: 'u', metadata: { 'og-description': 'og', description: 'plain' } }, 160)?.description).toBe(
      'og',
    );
  });

  it('falls back to description, click_url to url, and empty strings for the rest', () => {
    expect(toArticle({ url: 'u', metadata: { description: 'plain' } }, 160)).toEqual({
      title: '',
      url: 'u',
      thumbnail: '',
      click_url: 'u',
      description: 'plain',
    });
  });

  it('carries the optional fields only when the upstream sent them, from metadata or the item', () => {
    const article = toArticle(
      { url: 'u', author: 'A', metadata: { 'og-title': 'T', keyword: ['k'], createtime: null } },
      160,
    );
    expect(article).toEqual({
      title: 'T',
      url: 'u',
      thumbnail: '',
      click_url: 'u',
      description: '',
      author: 'A',
      keyword: ['k'],
    });
  });

  describe('og-* fields under metadata or on the item', () => {
    const article = (item: Record<string, unknown>) => toArticle({ url: 'u', ...item }, 160)!;

    it.each([
      ['under metadata', { metadata: { 'og-title': 'OG', 'og-description': 'OG desc', 'og-image': 'og.jpg' } }],
      ['on the item', { 'og-title': 'OG', 'og-description': 'OG desc', 'og-image': 'og.jpg' }],
    ])('reads og-title, og-description and og-image %s', (_where, item) => {
      expect(article(item)).toMatchObject({ title: 'OG', description: 'OG desc', thumbnail: 'og.jpg' });
    });

    it.each([
      [
        'both og-* and plain fields on the item',
        { 'og-title': 'OG', title: 'plain', 'og-description': 'OG desc', description: 'plain desc' },
      ],
      [
        'og-* on the item, plain fields in metadata',
        { 'og-title': 'OG', 'og-description': 'OG desc', metadata: { title: 'plain', description: 'plain desc' } },
      ],
      [
        'og-* in metadata, plain fields on the item',
        { title: 'plain', description: 'plain desc', metadata: { 'og-title': 'OG', 'og-description': 'OG desc' } },
      ],
    ])('lets og-title beat title and og-description beat description with %s', (_where, item) => {
      expect(article(item)).toMatchObject({ title: 'OG', description: 'OG desc' });
    });

    it('prefers the metadata copy when both places carry an og-* field', () => {
      const item = {
        'og-title': 'item title',
        'og-description': 'item desc',
        'og-image': 'item.jpg',
        metadata: { 'og-title': 'meta title', 'og-description': 'meta desc', 'og-image': 'meta.jpg' },
      };
      expect(article(item)).toMatchObject({ title: 'meta title', description: 'meta desc', thumbnail: 'meta.jpg' });
    });

    it('falls back to the item copy when the metadata one is blank or not text', () => {
      const item = {
        'og-title': 'item title',
        'og-description': 'item desc',
        metadata: { 'og-title': '  ', 'og-description': null },
      };
      expect(article(item)).toMatchObject({ title: 'item title', description: 'item desc' });
    });

    it('truncates an og-description found on the item like any description', () => {
      const description = article({ 'og-description': 'parola '.repeat(40) }).description;
      expect(description.length).toBeLessThanOrEqual(160);
      expect(description.endsWith('…')).toBe(true);
    });

    it('keeps a thumbnail on the item ahead of og-image from either place', () => {
      expect(
        article({ thumbnail: 't.jpg', 'og-image': 'item.jpg', metadata: { 'og-image': 'meta.jpg' } }).thumbnail,
      ).toBe('t.jpg');
    });

    it('takes the url from og-url on the item when the item has no url', () => {
      expect(toArticle({ 'og-url': 'https://www.example.com/a', 'og-title': 'T' }, 160)).toMatchObject({
        url: 'https://www.example.com/a',
        click_url: 'https://www.example.com/a',
        title: 'T',
      });
    });

    it('does not copy og-* fields into the article beside the mapped ones', () => {
      expect(Object.keys(article({ 'og-title': 'OG', metadata: { 'og-description': 'D' } })).sort()).toEqual([
        'click_url',
        'description',
        'thumbnail',
        'title',
        'url',
      ]);
    });
  });

  it('is no article without a url', () => {
    expect(toArticle({ metadata: { 'og-title': 'T' } }, 160)).toBeUndefined();
  });
});
