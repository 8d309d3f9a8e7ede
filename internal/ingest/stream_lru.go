package ingest

import "container/list"

// lru is a least-recently-used map with a byte budget and an entry cap.
// Every operation is O(1) but eviction, which removes exactly the entries
// over the bounds. It is not safe for concurrent use: its owner locks.
type lru[V any] struct {
	budget int // bytes; <= 0: none
	cap    int // entries; <= 0: none
	bytes  int
	order  *list.List // front: most recently used
	items  map[string]*list.Element
}

type lruItem[V any] struct {
	key  string
	val  V
	size int
}

func newLRU[V any](budget, capacity int) *lru[V] {
	return &lru[V]{budget: budget, cap: capacity, order: list.New(), items: map[string]*list.Element{}}
}

// get returns key's value and marks it used.
func (c *lru[V]) get(key string) (V, bool) {
	el, ok := c.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*lruItem[V]).val, true
}

// put stores key with its size in bytes, marks it used and evicts the least
// recently used entries until both bounds hold. An entry larger than the
// whole budget is not kept; put reports whether key is held afterwards.
func (c *lru[V]) put(key string, val V, size int) bool {
	if el, ok := c.items[key]; ok {
		it := el.Value.(*lruItem[V])
		c.bytes += size - it.size
		it.val, it.size = val, size
		c.order.MoveToFront(el)
	} else {
		c.items[key] = c.order.PushFront(&lruItem[V]{key: key, val: val, size: size})
		c.bytes += size
	}
	if c.budget > 0 && size > c.budget {
		c.remove(key)
		return false
	}
	for c.order.Len() > 0 && ((c.budget > 0 && c.bytes > c.budget) || (c.cap > 0 && c.order.Len() > c.cap)) {
		c.remove(c.order.Back().Value.(*lruItem[V]).key)
	}
	_, ok := c.items[key]
	return ok
}

// resize records key's new size, if key is still held, and evicts as put does.
func (c *lru[V]) resize(key string, size int) bool {
	el, ok := c.items[key]
	if !ok {
		return false
	}
	return c.put(key, el.Value.(*lruItem[V]).val, size)
}

func (c *lru[V]) remove(key string) {
	el, ok := c.items[key]
	if !ok {
		return
	}
	c.bytes -= el.Value.(*lruItem[V]).size
	c.order.Remove(el)
	delete(c.items, key)
}

func (c *lru[V]) len() int { return c.order.Len() }
