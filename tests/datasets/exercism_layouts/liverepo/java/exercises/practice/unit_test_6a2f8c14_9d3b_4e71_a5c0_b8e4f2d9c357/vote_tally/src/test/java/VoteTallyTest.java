import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

class VoteTallyTest {
    private VoteTally tally;

    @BeforeEach
    void setUp() {
        tally = new VoteTally();
    }

    @Test
    void testNoBallotsCountsZero() {
        assertEquals(0, tally.count(Ballot.YES));
        assertFalse(tally.carries());
    }

    @Test
    void testBallotsAreCountedByKind() {
        tally.cast(Ballot.YES);
        tally.cast(Ballot.ABSTAIN);
        tally.cast(Ballot.YES);
        assertEquals(2, tally.count(Ballot.YES));
        assertEquals(1, tally.count(Ballot.ABSTAIN));
        assertEquals(0, tally.count(Ballot.NO));
    }

    @Test
    void testMotionCarriesOnMoreYesThanNo() {
        tally.cast(Ballot.YES);
        tally.cast(Ballot.NO);
        assertFalse(tally.carries());
        tally.cast(Ballot.YES);
        assertTrue(tally.carries());
    }
}
