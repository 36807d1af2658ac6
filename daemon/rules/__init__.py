"""Pure game logic: cards and tiles, rankings, settlement, house way. No I/O."""
