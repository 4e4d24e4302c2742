import java.util.EnumMap;
import java.util.Map;

public class VoteTally {
    private final Map<Ballot, Integer> counts = new EnumMap<>(Ballot.class);

    public void cast(Ballot ballot) {
        counts.merge(ballot, 1, Integer::sum);
    }

    public int count(Ballot ballot) {
        return counts.getOrDefault(ballot, 0);
    }

    public boolean carries() {
        return count(Ballot.YES) > count(Ballot.NO);
    }
}
