import { toFeedItems } from '../../../src/actions/content/feed-items';

describe('feed items', () => {
  it('takes mlid before id, and numbers as strings', () => {
    expect(toFeedItems('feed_b', [{ mlid: 7, id: 'slug', label: 'x' }]).items).toEqual([
      { id: 'feed_b:7', feed: 'feed_b', testata: 'head_b', mlid: '7', label: 'x' },
    ]);
  });

  it('falls back to id when mlid is not a list id', () => {
    expect(toFeedItems('feed_a', [{ mlid: '', id: '12', name: 'n' }]).items[0]).toMatchObject({
      mlid: '12',
      label: 'n',
    });
  });

  it('takes the label from label, then name, then title, then the list id', () => {
    const { items } = toFeedItems('feed_a', [
      { id: 1, name: 'N', title: 'T' },
      { id: 2, title: ' T ' },
      { id: 3, label: '' },
    ]);
    expect(items.map((i) => i.label)).toEqual(['N', 'T', '3']);
  });

  it('skips non-numeric ids, non-objects and repeats, and counts them', () => {
    expect(toFeedItems('feed_a', [{ id: 'x1' }, null, [1], { id: 1.5 }, { id: 1 }, { mlid: '1' }])).toMatchObject({
      items: [{ mlid: '1' }],
      skipped: 5,
    });
  });
});
