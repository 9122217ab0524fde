"""asyncpool.sharding: near-equal contiguous shards of lists and columnar batches, and back.

Pure logic, no Ray.
"""

from __future__ import annotations

import random

import pytest

from asyncpool.sharding import shard, unshard


def test_shard_splits_a_list_into_near_equal_contiguous_pieces_longer_ones_first() -> None:
    assert shard(list(range(10)), 3) == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert shard(list(range(9)), 3) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert shard([1, 2, 3], 1) == [[1, 2, 3]]


def test_shard_keeps_the_sequence_type_of_the_input() -> None:
    assert shard((1, 2, 3, 4, 5), 2) == [(1, 2, 3), (4, 5)]
    assert shard(range(5), 2) == [range(0, 3), range(3, 5)]


def test_shard_gives_trailing_empty_shards_when_n_exceeds_the_batch() -> None:
    assert shard([1, 2], 4) == [[1], [2], [], []]
    assert shard([], 3) == [[], [], []]
    assert shard({"a": [1], "b": ["x"]}, 3) == [
        {"a": [1], "b": ["x"]},
        {"a": [], "b": []},
        {"a": [], "b": []},
    ]


def test_shard_splits_a_columnar_batch_column_by_column() -> None:
    batch = {"ids": [1, 2, 3, 4, 5], "text": ["a", "b", "c", "d", "e"]}
    assert shard(batch, 2) == [
        {"ids": [1, 2, 3], "text": ["a", "b", "c"]},
        {"ids": [4, 5], "text": ["d", "e"]},
    ]


@pytest.mark.parametrize("n", [0, -1])
def test_shard_rejects_n_below_one(n: int) -> None:
    with pytest.raises(ValueError, match=r"n must be an int >= 1, got -?[01]$"):
        shard([1, 2, 3], n)


@pytest.mark.parametrize("n", [1.0, True, "2"])
def test_shard_rejects_a_non_int_n(n: object) -> None:
    with pytest.raises(TypeError, match="n must be an int >= 1, got"):
        shard([1, 2, 3], n)  # type: ignore[call-overload]


def test_shard_rejects_a_ragged_columnar_batch_naming_the_lengths() -> None:
    with pytest.raises(ValueError, match=r"'a': 3, 'b': 2"):
        shard({"a": [1, 2, 3], "b": [1, 2]}, 2)


@pytest.mark.parametrize("batch", ["abc", b"abc", 3, {1, 2}, {"a": 5}])
def test_shard_rejects_what_is_not_a_batch(batch: object) -> None:
    with pytest.raises(TypeError):
        shard(batch, 2)  # type: ignore[call-overload]


def test_unshard_joins_lists_tuples_and_columns_in_order() -> None:
    assert unshard([[1, 2], [3], []]) == [1, 2, 3]
    assert unshard([(1,), (2, 3)]) == (1, 2, 3)
    assert unshard([{"a": [1], "b": ["x"]}, {"b": ["y"], "a": [2]}]) == {
        "a": [1, 2],
        "b": ["x", "y"],
    }
    assert unshard([]) == []


def test_unshard_rejects_mismatched_columns_and_mixed_parts() -> None:
    with pytest.raises(ValueError, match="columns"):
        unshard([{"a": [1]}, {"b": [2]}])
    with pytest.raises(TypeError, match="mix"):
        unshard([{"a": [1]}, [2]])
    with pytest.raises(TypeError):
        unshard([[1], 2])


def test_shard_then_unshard_round_trips_every_size_and_shard_count() -> None:
    rng = random.Random(1234)
    for length in range(0, 40):
        items = [rng.randrange(1000) for _ in range(length)]
        batch = {"x": items, "y": [str(v) for v in items]}
        for n in range(1, 45):
            parts = shard(items, n)
            sizes = [len(p) for p in parts]
            assert len(parts) == n
            assert sum(sizes) == length
            assert max(sizes) - min(sizes) <= 1
            assert sizes == sorted(sizes, reverse=True)  # the longer shards come first
            assert unshard(parts) == items
            assert unshard(shard(batch, n)) == batch


def test_shard_and_unshard_handle_numpy_columns() -> None:
    np = pytest.importorskip("numpy")
    batch = {"x": np.arange(7), "y": np.arange(7) * 2}
    parts = shard(batch, 3)
    assert [len(p["x"]) for p in parts] == [3, 2, 2]
    joined = unshard(parts)
    assert (joined["x"] == batch["x"]).all()
    assert (joined["y"] == batch["y"]).all()
