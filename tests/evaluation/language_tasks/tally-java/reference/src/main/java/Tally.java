import java.util.LinkedHashMap;
import java.util.Map;

public class Tally {
    private final Map<String, Integer> counts = new LinkedHashMap<>();

    public void add(String name) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("a name is needed");
        }
        counts.merge(name, 1, Integer::sum);
    }

    public int count(String name) {
        return counts.getOrDefault(name, 0);
    }

    public String top() {
        String best = null;
        for (Map.Entry<String, Integer> entry : counts.entrySet()) {
            if (best == null || entry.getValue() > counts.get(best)) {
                best = entry.getKey();
            }
        }
        return best;
    }
}
