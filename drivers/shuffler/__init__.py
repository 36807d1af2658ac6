"""The card shuffler: `messages` (the wire, pure), `driver` (asyncio), `adapter` (what its
events and commands mean to the table's procedure)."""
