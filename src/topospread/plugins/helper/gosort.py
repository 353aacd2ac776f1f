"""Go's ``sort.Slice``: pattern-defeating quicksort, unstable but deterministic.

Upstream sorts preemption victims with ``sort.Slice`` (``SelectVictimsOnNode``,
``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go``). Up to 12
elements it is an insertion sort, which keeps equal elements in order; beyond that the
order of elements the comparator calls equal depends on the algorithm's every step. This
module follows the algorithm described in Go's ``sort/zsortfunc.go`` (Go 1.19 and later,
unchanged through the Go release v1.37.1 is built with): insertion sort up to 12
elements, heap sort when the recursion budget ``bits.Len(n)`` runs out, ninther / median
of three pivots with the sortedness hint they yield, a reversal for a descending hint,
partial insertion sort for nearly sorted input, an equal-elements partition when the
pivot equals the element left of the range, and the xorshift-seeded pattern breaker
after an unbalanced partition. It calls ``less`` with the same indices in the same order
as Go, so a comparator that is not a strict weak order gives Go's answer too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["go_sort_slice"]

T = TypeVar("T")

_MAX_INSERTION = 12
_SHORTEST_NINTHER = 50
_MAX_SWAPS = 4 * 3
_MAX_STEPS = 5
_SHORTEST_SHIFTING = 50
_MASK64 = (1 << 64) - 1

_UNKNOWN, _INCREASING, _DECREASING = 0, 1, 2


def go_sort_slice(items: list[T], less: Callable[[T, T], bool]) -> None:
    """Sort ``items`` in place exactly as ``sort.Slice(items, less)`` orders them."""
    n = len(items)
    _Sorter(items, less).pdqsort(0, n, n.bit_length())


class _Sorter(Generic[T]):
    __slots__ = ("items", "less_items")

    def __init__(self, items: list[T], less: Callable[[T, T], bool]) -> None:
        self.items = items
        self.less_items = less

    def less(self, i: int, j: int) -> bool:
        return self.less_items(self.items[i], self.items[j])

    def swap(self, i: int, j: int) -> None:
        items = self.items
        items[i], items[j] = items[j], items[i]

    def insertion_sort(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        first, hi = a, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self.sift_down(0, i, first)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        was_balanced = True
        was_partitioned = True
        while True:
            length = b - a
            if length <= _MAX_INSERTION:
                self.insertion_sort(a, b)
                return
            if limit == 0:
                self.heap_sort(a, b)
                return
            if not was_balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == _DECREASING:
                self.reverse_range(a, b)
                # The pivot moved with the reversal.
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING
            if (
                was_balanced
                and was_partitioned
                and hint == _INCREASING
                and self.partial_insertion_sort(a, b)
            ):
                return
            if a > 0 and not self.less(a - 1, pivot):
                # The pivot equals the element before the range: every element equal to
                # it goes left and is done.
                a = self.partition_equal(a, b, pivot)
                continue
            mid, already = self.partition(a, b, pivot)
            was_partitioned = already
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                was_balanced = left >= threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                was_balanced = right >= threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i += 1
        j -= 1
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i += 1
            j -= 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i += 1
            j -= 1

    def partial_insertion_sort(self, a: int, b: int) -> bool:
        i = a + 1
        for _ in range(_MAX_STEPS):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < _SHORTEST_SHIFTING:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:
                # Shift the smaller element left (the scan goes down to index 1, not a).
                k = i - 1
                while k >= 1:
                    if not self.less(k, k - 1):
                        break
                    self.swap(k, k - 1)
                    k -= 1
            if b - i >= 2:
                k = i + 1
                while k < b:
                    if not self.less(k, k - 1):
                        break
                    self.swap(k, k - 1)
                    k += 1
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length < 8:
            return
        state = length  # xorshift seeded with the length, 64-bit
        modulus = 1 << length.bit_length()
        centre = a + (length // 4) * 2
        for idx in range(centre - 1, centre + 2):
            state ^= (state << 13) & _MASK64
            state ^= state >> 7
            state ^= (state << 17) & _MASK64
            other = state & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(idx, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        length = b - a
        swaps = [0]
        i = a + length // 4 * 1
        j = a + length // 4 * 2
        k = a + length // 4 * 3
        if length >= 8:
            if length >= _SHORTEST_NINTHER:
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, _INCREASING
        if swaps[0] == _MAX_SWAPS:
            return j, _DECREASING
        return j, _UNKNOWN

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def reverse_range(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i += 1
            j -= 1
